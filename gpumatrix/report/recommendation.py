"""A :class:`~gpumatrix.results.recommend.Recommendation` for a terminal or as JSON."""

from __future__ import annotations

import json

from gpumatrix.report.escape import clean
from gpumatrix.report.vocabulary import figure
from gpumatrix.results.recommend import Recommendation

RECOMMEND_FORMATS = ("text", "json")


def render_recommendation(rec: Recommendation, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(rec.to_dict(), indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    lines = [f"Known-good image for {rec.host_type}: {rec.cell_id} (torch {rec.torch} on {rec.base_image})",
             f"  image: {rec.reference}"]
    if rec.note:
        lines.append(f"  note: {rec.note}")
    if rec.tflops:
        lines.append(f"  measured: {figure(rec.tflops[1])} TFLOP/s {rec.tflops[0]}")
    lines.append(f"  tested on: {', '.join(rec.hosts)}")
    lines.append(f"  run it:  {rec.docker_run}")
    if rec.alternatives:
        lines.append(f"  next best: {', '.join(rec.alternatives)}")
    return "\n".join(clean(line) for line in lines) + "\n"
