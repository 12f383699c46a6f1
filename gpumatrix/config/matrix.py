"""Compatibility shim: ``from gpumatrix.config.matrix import X`` keeps working.

The config stage now lives in rooms (model, schema, loader, expand, select); import from
:mod:`gpumatrix.config` instead. This module goes once no caller uses it.
"""

from gpumatrix.config import *  # noqa: F401,F403
from gpumatrix.config import __all__  # noqa: F401
