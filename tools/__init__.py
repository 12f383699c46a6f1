"""Development tools that do not ship in the gpumatrix wheel."""
