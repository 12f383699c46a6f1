"""``python -m gpumatrix …`` is the ``gpumatrix`` command."""

from gpumatrix.program import main

if __name__ == "__main__":
    main()
