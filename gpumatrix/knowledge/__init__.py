"""What gpumatrix knows about the world, as opposed to what it measures: release data and the rules over it.

* :mod:`.releases` — the YAML files under ``gpumatrix/data/`` (torch variants and Pythons, driver floors,
  arch lists, GPU peaks, base images), each with its sources;
* :mod:`.versions` — the one version type (``packaging.version``) and its lenient parser;
* :mod:`.archs` — the one GPU-arch compatibility rule (shared with the probes) and each torch build's archs;
* :mod:`.drivers` — which NVIDIA driver a CUDA version needs;
* :mod:`.peaks` — GPU peak figures as the probes read them.

Nothing here talks to an engine, a host or a container.
"""
