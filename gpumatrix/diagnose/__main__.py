"""``python -m gpumatrix.diagnose [--json] [--cell] [FILE|-]``."""

import sys

from gpumatrix.diagnose.cli import main

if __name__ == "__main__":
    sys.exit(main())
