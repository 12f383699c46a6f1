"""The engine layer: the only code that imports ``docker``.

:class:`~gpumatrix.engine.client.Engine` talks to the daemon; :mod:`gpumatrix.engine.models` holds the typed
objects it returns (:class:`ImageInfo`, :class:`ContainerInfo`, :class:`EngineInfo`, :class:`ContainerOutcome`)
and the engine-neutral :class:`ContainerSpec` the layers above describe a container with.
"""
