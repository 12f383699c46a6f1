"""gpumatrix tasks for ``invoke`` in a checkout: ``invoke --list`` shows them, ``invoke --help TASK`` explains each.

The tasks themselves live in the package (``gpumatrix/tasks.py``), so ``invoke …`` here and the installed
``gpumatrix …`` command are the same Collection.
"""

from gpumatrix.tasks import ns

__all__ = ["ns"]
