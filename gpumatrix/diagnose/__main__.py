"""``python -m gpumatrix.diagnose [--json] [--cell] [FILE|-]``."""

import sys

from gpumatrix.diagnose.cli import main

sys.exit(main())
