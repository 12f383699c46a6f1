"""gpumatrix probe suite: checks one container's GPU stack layer by layer.

Runs as ``python -m probes`` inside the container under test. It must work in any
image: standard library and torch only, Python 3.8+, and torch is only ever imported
inside isolated child processes (see ``probes.isolation``).
"""

SUITE_NAME = "gpumatrix-probes"
__version__ = "0.1.0"
SCHEMA_VERSION = 1
