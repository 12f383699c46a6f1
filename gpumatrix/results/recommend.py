"""Recommend: the known-good image for a host type, pinned by digest, and how to run it.

From results (one folder, many folders, or merged JSON) take the cells that ran on the host type,
keep those whose **critical** probes all pass — every probe of layers 1–5 (kernel driver up to the
framework); performance (layer 6) measures and is never critical — and any ``--require``d probes
pass (not merely skip), then pick the newest torch; ties go to the higher measured TFLOP/s, then the
cell id. The reference is ``repo@sha256:…`` when the image was pushed (``--push``), else the local
image id, which only names the image on the host that built it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Mapping, Sequence

from gpumatrix.errors import ExitCode, GpumatrixError
from gpumatrix.knowledge.versions import at_least, version_key
from gpumatrix.results.merge import Merged, Sourced
from gpumatrix.results.status import NOT_RUN, PROBE_FAILING
from gpumatrix.results.store import CellResult

CRITICAL_LAYERS = (1, 2, 3, 4, 5)
# `docker run` flags that pass a vendor's GPUs through, as the vendors document them; --shm-size because
# Docker's 64 MB /dev/shm breaks DataLoader workers and NCCL.
RUN_FLAGS: Mapping[str, tuple[str, ...]] = {
    "nvidia": ("--gpus", "all", "--shm-size", "8g"),
    "amd": ("--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video", "--group-add", "render",
            "--shm-size", "8g"),
    "cpu": ("--shm-size", "8g"),
}


# What an image reference may look like (name[:tag][@digest], or an image id): no blank, no shell syntax,
# and no leading "-", which `docker run` would take for a flag. A results file may say anything.
IMAGE_REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,511}")


class NoRecommendation(GpumatrixError):
    """No image in the results is known to work on this host type with the filters given."""

    exit_code = ExitCode.FAILED


@dataclass(frozen=True)
class Recommendation:
    cell_id: str
    host_type: str
    torch: str
    vendor: str
    base_image: str
    reference: str  # repo@sha256:… or the local image id
    pinned: bool  # True when `reference` is a registry digest any host can pull
    docker_run: str
    hosts: tuple[str, ...]
    tflops: tuple[str, float] | None = None
    note: str | None = None
    alternatives: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def critical_failures(result: CellResult) -> list[str]:
    """Ids of the probes of layers 1–5 that did not pass (skips are fine); the status when no probes ran."""
    if result.status not in ("pass", "fail") or not result.probes:
        return [f"status {result.status}"]
    return [str(p.get("id")) for p in (result.probes or {}).get("probes") or []
            if p.get("layer") in CRITICAL_LAYERS and p.get("status") in PROBE_FAILING]


def missing_required(result: CellResult, require: Sequence[str]) -> list[str]:
    """The ``--require`` globs no passing probe of ``result`` matches."""
    passed = [str(p.get("id")) for p in (result.probes or {}).get("probes") or [] if p.get("status") == "pass"]
    return [g for g in require if not any(fnmatchcase(pid, g) for pid in passed)]


def image_reference(image: Mapping[str, Any] | None) -> tuple[str, bool]:
    """(reference, pinned): the pushed/pulled digest reference if any, else the local image id."""
    image = image or {}
    for key in ("pushed", "pulled"):
        if image.get(key):
            return str(image[key]), True
    digests = sorted(str(d) for d in image.get("repo_digests") or [] if "@sha256:" in str(d))
    if digests:
        return digests[0], True
    return str(image.get("id") or "?"), False


def docker_run_line(vendor: str, reference: str) -> str:
    """The shell line that runs ``reference``, every word quoted: a reference comes from a results file."""
    return shlex.join(["docker", "run", "--rm", "-it", *RUN_FLAGS.get(vendor, RUN_FLAGS["cpu"]), reference])


def _usable(entry_results: Sequence[Sourced], require: Sequence[str]) -> tuple[CellResult | None, str]:
    """A result every considered host agrees is good (critical probes pass, required probes pass), or why not."""
    if not entry_results:
        return None, "not run"
    for s in entry_results:
        bad = critical_failures(s.result)
        if bad:
            return None, f"on {s.hostname}: {', '.join(bad[:3])}"
        missing = missing_required(s.result, require)
        if missing:
            return None, f"on {s.hostname}: required probe(s) {', '.join(missing)} did not pass"
    return entry_results[0].result, ""


def recommend(merged: Merged, host_type: str, vendor: str | None = None, min_torch: str | None = None,
              require: Sequence[str] = ()) -> Recommendation:
    """The newest known-good image for ``host_type``; :class:`NoRecommendation` says why there is none."""
    if host_type not in merged.host_types:
        known = ", ".join(merged.host_labels()) or "none"
        raise NoRecommendation(f"no results from a host of type {host_type!r} (the results have: {known}); "
                               f"run 'invoke matrix' on one, or pass --host-type")
    candidates: list[tuple[tuple, CellResult, Sourced]] = []
    rejected: list[str] = []
    for cid in merged.cell_ids():
        entry = merged.entry(cid, host_type)
        if entry is None:
            continue
        r0 = entry.result
        if vendor and r0.vendor != vendor:
            continue
        if min_torch and not at_least(r0.torch, min_torch):
            continue
        if entry.status in NOT_RUN:
            continue
        good, why = _usable(entry.considered, require)
        if good is None:
            rejected.append(f"{cid}: {why}")
            continue
        reference = image_reference(good.image)[0]
        if not IMAGE_REFERENCE.fullmatch(reference):
            rejected.append(f"{cid}: no usable image reference ({reference[:80]!r})")
            continue
        headline = good.headline_tflops()
        key = (version_key(good.torch.split("+", 1)[0]), image_reference(good.image)[1],
               headline[1] if headline else 0.0, tuple(-ord(ch) for ch in cid))
        candidates.append((key, good, entry.considered[0]))
    if not candidates:
        filters = ", ".join(x for x in (f"vendor {vendor}" if vendor else "", f"torch >= {min_torch}" if min_torch
                                        else "", f"requiring {', '.join(require)}" if require else "") if x)
        lines = [f"no known-good image for {host_type}" + (f" with {filters}" if filters else "")]
        lines += [f"  {x}" for x in rejected]
        raise NoRecommendation("\n".join(lines))
    candidates.sort(key=lambda c: c[0], reverse=True)
    _, best, _ = candidates[0]
    entry = merged.entry(best.cell_id, host_type)
    reference, pinned = image_reference(best.image)
    note = None if pinned else ("not pushed: this is a local image id, valid only on the host that built it; "
                                "build with --push REGISTRY to get a digest any host can pull")
    return Recommendation(
        cell_id=best.cell_id, host_type=host_type, torch=best.torch, vendor=best.vendor, base_image=best.base_image,
        reference=reference, pinned=pinned, docker_run=docker_run_line(best.vendor, reference),
        hosts=tuple(entry.host_names()) if entry else (), tflops=best.headline_tflops(), note=note,
        alternatives=tuple(c[1].cell_id for c in candidates[1:4]))
