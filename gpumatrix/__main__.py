"""``python -m gpumatrix …`` is the ``gpumatrix`` command."""

from gpumatrix.program import main

main()
