"""The one rule for "does a build compiled for these GPU archs run on this GPU?".

Standard library only, and no import from the rest of the package: the probes use it in
the container (``probes.archs``) and the gpumatrix host side imports the same file as
``gpumatrix.probes.archs``. The data (which capabilities are isolated, which ROCm generic
targets cover which processors, and the sources of both) is ``data/arch_compat.json``
next to this file.

CUDA (``sm_XY``, ``compute_XY``; capability X.Y is written XY, 10.0 as 100):

* a cubin ``sm_XY`` runs on a device of capability X.Z with Z >= Y (same major), except
  across the integrated/Tegra isolation of the data file (``cuda_isolated``: code for an
  isolated capability runs only on the ones listed for it, and no other code runs there);
* ``sm_XYa`` (architecture-specific) runs only on exactly X.Y;
* ``sm_XYf`` (family-specific) runs on the same major with a minor >= Y;
* PTX ``compute_XY`` is JIT-compiled for any capability >= X.Y (``compute_XYa`` only for
  X.Y, ``compute_XYf`` for the same major with a minor >= Y).

ROCm (``gfxNNNN[:feature±...]``): a code object runs only on its exact ISA, or through a
``gfx*-generic`` target that lists the processor. Target features (``xnack``, ``sramecc``)
must agree where both the code object and the device state them; a code object that does
not state one runs either way. ``HSA_OVERRIDE_GFX_VERSION`` makes the runtime load code
for another ISA: pass that ISA as ``override``.
"""

import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

ARCH_RULES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "arch_compat.json")

MATCHES = ("exact", "binary_compatible", "generic", "ptx_jit", "override", "none")
MATCH_RANK = {"exact": 3, "binary_compatible": 2, "generic": 2, "ptx_jit": 1, "none": 0}

_CUDA_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_GFX = re.compile(r"^(gfx[0-9a-z]+(?:-[0-9a-z]+)*-generic|gfx[0-9]+[0-9a-f]{2})((?::[a-z]+[+-])*)$")
_OVERRIDE = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)\s*$")

_cached_rules = None  # type: Optional[Dict[str, Any]]


def load_arch_rules(path: Optional[str] = None) -> Dict[str, Any]:
    """The rules of ``data/arch_compat.json`` (read once when ``path`` is not given)."""
    global _cached_rules
    if path is not None:
        with open(path) as handle:
            return json.load(handle)
    if _cached_rules is None:
        with open(ARCH_RULES_FILE) as handle:
            _cached_rules = json.load(handle)
    return _cached_rules


def parse_cuda_arch(text: str) -> Optional[Tuple[str, int, int, str]]:
    """``"sm_90a"`` -> ``("sm", 9, 0, "a")``; None when it is not a CUDA arch."""
    match = _CUDA_ARCH.match(text.strip())
    if not match:
        return None
    number = int(match.group(2))
    return match.group(1), number // 10, number % 10, match.group(3)


def parse_gfx(text: str) -> Optional[Tuple[str, Dict[str, str]]]:
    """``"gfx90a:sramecc+:xnack-"`` -> ``("gfx90a", {"sramecc": "+", "xnack": "-"})``."""
    match = _GFX.match(text.strip().lower())
    if not match:
        return None
    features = {}
    for part in match.group(2).split(":"):
        if part:
            features[part[:-1]] = part[-1]
    return match.group(1), features


def gfx_from_override(value: Optional[str]) -> Optional[str]:
    """``HSA_OVERRIDE_GFX_VERSION`` ("10.3.0", "9.0.10") as the ISA it selects ("gfx1030", "gfx90a")."""
    match = _OVERRIDE.match(value or "")
    if not match:
        return None
    major, minor, stepping = (int(g) for g in match.groups())
    if minor > 15 or stepping > 15:
        return None
    return "gfx%d%x%x" % (major, minor, stepping)


def _isolation(rules: Mapping[str, Any]) -> Tuple[Dict[int, set], set]:
    isolated = {int(k): set(int(c) for c in v) for k, v in rules.get("cuda_isolated", {}).items()}
    integrated = set(cc for ccs in isolated.values() for cc in ccs)
    return isolated, integrated


def cuda_code_runs_on(kind: str, code: Tuple[int, int], suffix: str, device: Tuple[int, int],
                      rules: Mapping[str, Any]) -> Optional[str]:
    """How code ``<kind>_<code><suffix>`` runs on a device of capability ``device``: "exact",
    "binary_compatible", "ptx_jit" or None (it does not)."""
    code_cc, device_cc = code[0] * 10 + code[1], device[0] * 10 + device[1]
    same_major_newer = code[0] == device[0] and code[1] <= device[1]
    if kind == "sm":
        if code == device:
            return "exact"
        if suffix == "a":  # architecture-specific: exactly that capability
            return None
        isolated, integrated = _isolation(rules)
        if code_cc in isolated:
            return "binary_compatible" if device_cc in isolated[code_cc] else None
        if device_cc in integrated:
            return None
        return "binary_compatible" if same_major_newer else None
    if suffix == "a":
        return "ptx_jit" if code == device else None
    if suffix == "f":
        return "ptx_jit" if same_major_newer else None
    return "ptx_jit" if code <= device else None


def _features_agree(code: Mapping[str, str], device: Mapping[str, str]) -> bool:
    return all(device.get(name, sign) == sign for name, sign in code.items())


def _describe(device: str, match: str, via: List[str], runs_as: Optional[str]) -> str:
    if match == "override":
        return "override (%s runs as %s)" % (device, runs_as)
    if match == "none":
        if runs_as:
            return "none (%s runs as %s, and the build has no code for %s)" % (device, runs_as, runs_as)
        return "none (no code for %s)" % device
    return "%s (%s via %s)" % (match, device, "/".join(via))


def arch_compatibility(device_arch: str, arch_list: Sequence[str], rules: Optional[Mapping[str, Any]] = None,
                       override: Optional[str] = None) -> Dict[str, Any]:
    """Whether a build compiled for ``arch_list`` has code that runs on ``device_arch``.

    Stable interface (the gpumatrix host imports it as ``gpumatrix.probes.archs``):

    * ``device_arch``: ``"sm_90"`` or ``"gfx942"`` / ``"gfx90a:sramecc+:xnack-"`` (the real ISA);
    * ``arch_list``: what ``torch.cuda.get_arch_list()`` printed (``sm_80``, ``sm_90a``,
      ``compute_90``, ``gfx942``, ``gfx11-generic``, ``gfx90a:xnack-`` ...);
    * ``rules``: the parsed ``data/arch_compat.json``; None reads it;
    * ``override``: the ISA ``HSA_OVERRIDE_GFX_VERSION`` makes the runtime use (see
      ``gfx_from_override``), or None. The runtime then loads code for that ISA only.

    Returns ``{"device", "match", "via", "unparsed", "runs_as", "description"}``: ``match`` is
    one of "exact", "binary_compatible" (a cubin of the same major, lower minor),
    "generic" (a ROCm gfx*-generic code object), "ptx_jit" (PTX only, JIT-compiled at first
    use), "override" (runs only because of the override, e.g. description
    "override (gfx1031 runs as gfx1030)") or "none"; ``via`` lists the entries that
    provide it; ``unparsed`` the entries (or the device) that could not be read.
    """
    rules = load_arch_rules() if rules is None else rules
    best, via, unparsed = "none", [], []  # type: str, List[str], List[str]

    def offer(match: str, entry: str) -> None:
        nonlocal best, via
        if MATCH_RANK[match] > MATCH_RANK[best]:
            best, via = match, [entry]
        elif match == best and match != "none":
            via.append(entry)

    device_arch = device_arch.strip()
    runs_as = None  # type: Optional[str]
    cuda_device = parse_cuda_arch(device_arch)
    if cuda_device and cuda_device[0] == "sm":
        for entry in arch_list:
            parsed = parse_cuda_arch(entry)
            if not parsed:
                unparsed.append(entry)
                continue
            match = cuda_code_runs_on(parsed[0], (parsed[1], parsed[2]), parsed[3],
                                      (cuda_device[1], cuda_device[2]), rules)
            if match:
                offer(match, entry)
    elif parse_gfx(device_arch):
        real, device_features = parse_gfx(device_arch)  # type: ignore[misc]
        target_isa = real
        override_parsed = parse_gfx(override) if override else None
        if override_parsed and override_parsed[0] != real:
            target_isa = runs_as = override_parsed[0]
        generic = rules.get("rocm_generic", {})
        for entry in arch_list:
            parsed = parse_gfx(entry)
            if not parsed:
                unparsed.append(entry)
                continue
            target, features = parsed
            if not _features_agree(features, device_features):
                continue
            if target == target_isa:
                offer("exact", entry)
            elif target_isa in generic.get(target, ()):
                offer("generic", entry)
        if runs_as and best != "none":
            best = "override"
    else:
        unparsed.append(device_arch)
    return {"device": device_arch, "match": best, "via": via, "unparsed": unparsed, "runs_as": runs_as,
            "description": _describe(device_arch, best, via, runs_as)}
