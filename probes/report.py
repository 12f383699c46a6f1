"""Human-readable rendering of the JSON document (``python -m probes`` without --json)."""

from typing import Any, Dict, List, Mapping

from .model import LAYERS


def _fact_lines(document: Mapping[str, Any]) -> List[str]:
    facts = document.get("facts", {})
    torch = facts.get("torch", {})
    driver = facts.get("driver", {})
    lines = [
        "python %s on %s (%s)" % (facts.get("python"), facts.get("os"), facts.get("libc")),
        "torch %s  cuda %s  hip %s  cudnn %s  available %s"
        % (torch.get("version"), torch.get("cuda"), torch.get("hip"), torch.get("cudnn"), torch.get("available")),
    ]
    if torch.get("import_error"):
        lines.append("torch import error: %s" % torch["import_error"])
    nvidia = (driver.get("nvidia") or {}).get("version")
    amdgpu = (driver.get("amdgpu") or {}).get("version")
    if nvidia or amdgpu:
        lines.append("driver: nvidia %s  amdgpu %s" % (nvidia, amdgpu))
    for device in facts.get("devices", []):
        lines.append(
            "device %s: %s (%s, %.1f GiB)"
            % (device.get("index"), device.get("name"), device.get("arch"), (device.get("total_memory_bytes") or 0) / 2**30)
        )
    return lines


def render_text(document: Mapping[str, Any]) -> str:
    """The document as a report grouped by layer, ending with the verdict."""
    out = [
        "%s %s (%s mode), accelerator: %s, %.1fs"
        % (document["suite"]["name"], document["suite"]["version"], document["mode"], document["accelerator"],
           document["duration_s"]),
        "",
    ]
    out.extend("  " + line for line in _fact_lines(document))
    by_layer = {}  # type: Dict[int, List[Mapping[str, Any]]]
    for result in document["probes"]:
        by_layer.setdefault(result["layer"], []).append(result)
    width = max([len(r["id"]) for r in document["probes"]] or [10])
    for layer in sorted(by_layer):
        out.append("")
        out.append("Layer %d: %s" % (layer, LAYERS.get(layer, "?")))
        for result in by_layer[layer]:
            out.append(
                "  %-7s %-*s %6.2fs  %s"
                % (result["status"].upper(), width, result["id"], result["duration_s"], result["message"])
            )
    verdict = document["verdict"]
    out.append("")
    out.append("Verdict: %s" % verdict["summary"])
    return "\n".join(out) + "\n"
