"""gpumatrix: which container image actually works on this GPU host?

The package is laid out in the order data flows (see docs/architecture.md):
config -> images -> run -> results -> report / diagnose, with ``engine`` the
only module that talks to the Docker daemon.
"""

__version__ = "0.1.0"
