"""Which probes exist, and which of them a run selects.

Each layer module exposes ``PROBES``, a list of ``probes.model.Probe``. Further modules
can be named in the environment variable ``GPUMATRIX_PROBES_EXTRA`` (comma-separated
importable module names, each with its own ``PROBES``); the tests use it to inject
misbehaving probes, and it works the same in the parent and in every child.
"""

import fnmatch
import importlib
import os
from typing import Dict, List, Mapping, Optional, Sequence

from .model import Probe, probes_in_layer_order, validate_probe_id

# Relative to this package, which is ``probes`` in a container and ``gpumatrix.probes`` in the wheel.
PROBE_MODULES = (
    ".kernel_driver",
    ".system_runtime",
    ".programming_interface",
    ".math_libraries",
    ".framework",
    ".performance",
)
EXTRA_MODULES_ENV = "GPUMATRIX_PROBES_EXTRA"


class RegistryError(Exception):
    """The set of probes is inconsistent (bad id, duplicate, unimportable extra module)."""


def probe_module_names(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    environ = os.environ if environ is None else environ
    extra = [name.strip() for name in environ.get(EXTRA_MODULES_ENV, "").split(",") if name.strip()]
    return list(PROBE_MODULES) + extra


def load_probes(environ: Optional[Mapping[str, str]] = None) -> List[Probe]:
    """All registered probes, lowest layer first (registry order inside a layer)."""
    probes = []  # type: List[Probe]
    seen = {}  # type: Dict[str, str]
    for module_name in probe_module_names(environ):
        try:
            module = importlib.import_module(module_name, package=__package__)
        except Exception as err:  # an extra module given by the user may be broken
            raise RegistryError("cannot import probe module %r: %s: %s" % (module_name, type(err).__name__, err)) from err
        for probe in getattr(module, "PROBES", ()):
            problem = validate_probe_id(probe.id)
            if problem:
                raise RegistryError("%s (in %s)" % (problem, module_name))
            if probe.id in seen:
                raise RegistryError("probe id %r registered twice (%s and %s)" % (probe.id, seen[probe.id], module_name))
            seen[probe.id] = module_name
            probes.append(probe)
    return probes_in_layer_order(probes)


def split_patterns(values: Sequence[str]) -> List[str]:
    """``--only`` values, each possibly comma-separated, as a flat list of globs."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def select_probes(probes: Sequence[Probe], patterns: Sequence[str], quick: bool, perf: bool) -> List[Probe]:
    """The probes a run executes.

    ``quick`` keeps only the smoke probes (and never performance); ``perf=False`` drops
    layer 6; ``patterns`` (fnmatch globs over ids) keep only matching probes.
    """
    chosen = []
    for probe in probes:
        if quick and not probe.quick:
            continue
        if probe.perf and (quick or not perf):
            continue
        if patterns and not any(fnmatch.fnmatchcase(probe.id, pattern) for pattern in patterns):
            continue
        chosen.append(probe)
    return chosen


def groups_in_order(probes: Sequence[Probe]) -> List[List[Probe]]:
    """Probes grouped by child process, groups in order of first appearance."""
    groups = {}  # type: Dict[str, List[Probe]]
    for probe in probes:
        groups.setdefault(probe.group, []).append(probe)
    return list(groups.values())
