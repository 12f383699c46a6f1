"""The compatibility table: one model for one host type or many, and its text and Markdown renderings.

Rows are cells (by base, newest torch first); columns are host types (GPU model and driver) — a
single host's report is the table with one host-type column, a fleet's has one per type. Each entry is
a status mark and a few words or a figure; every entry that is not a clean pass gets a numbered note
with the reason, and the diagnosis (cause, remedy, evidence) where there is one. Entries with the same
note share its number.

Every renderer (text and Markdown here, JSON in :mod:`gpumatrix.report.formats`, HTML and JUnit in
their modules) is a view of :class:`Table`; all foreign text passes through :mod:`gpumatrix.report.escape`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from tabulate import tabulate

from gpumatrix.report import escape
from gpumatrix.report.vocabulary import LEGEND, MARKS, SHOWN, counts_text, entry_text, note_parts, word
from gpumatrix.results.merge import Entry, Merged
from gpumatrix.results.store import CellResult


@dataclass(frozen=True)
class HostColumn:
    """One host type: its label, the hosts that reported it, their GPU architectures, the status counts."""

    label: str
    hostnames: tuple[str, ...]
    archs: tuple[str, ...]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class TableEntry:
    """What one (cell, host type) shows: its status (or ``conflict``), a short text, its note's number."""

    entry: Entry
    status: str
    text: str
    note: int | None


@dataclass(frozen=True)
class Row:
    cell_id: str
    result: CellResult  # describes the row (base, torch, vendor are the same on every host)
    entries: tuple[TableEntry | None, ...]  # one per column; None where the host type has no result


@dataclass(frozen=True)
class Note:
    number: int
    where: tuple[str, ...]  # the cells (``cell on host type`` when there are several host types)
    lines: tuple[str, ...]  # what and why first; then cause and fix, evidence, log


@dataclass(frozen=True)
class Table:
    title: str | None
    columns: tuple[HostColumn, ...]
    rows: tuple[Row, ...]
    notes: tuple[Note, ...]
    warnings: tuple[str, ...]
    merged: Merged  # the model, for renderings that show more than the table (JSON, HTML details, JUnit)


def _note_lines(e: Entry) -> tuple[str, ...]:
    if not e.conflict:
        return tuple(note_parts(e.result))
    lines: list[str] = []
    for name, s in zip(e.host_names(), e.considered):
        if s.result.status != "pass":
            first, *rest = note_parts(s.result)
            lines += [f"on {name}: {first}", *rest]
    return tuple(lines)


def build_table(merged: Merged, title: str | None = None) -> Table:
    """The table of ``merged``: one column per host type, one row per cell, numbered notes."""
    labels = merged.host_labels()
    counts = merged.counts()
    columns = tuple(HostColumn(label, tuple(merged.host_types[label]["hostnames"]),
                               tuple(merged.host_types[label]["archs"]), counts[label]) for label in labels)
    notes: dict[tuple[str, ...], list[str]] = {}  # note lines -> where, in first-seen order
    rows = []
    for cid in merged.cell_ids():
        entries: list[TableEntry | None] = []
        for label in labels:
            e = merged.entry(cid, label)
            if e is None:
                entries.append(None)
                continue
            number = None
            if e.status != "pass":
                lines = _note_lines(e)
                notes.setdefault(lines, []).append(cid if len(labels) == 1 else f"{cid} on {label}")
                number = list(notes).index(lines) + 1
            entries.append(TableEntry(e, e.status, entry_text(e), number))
        rows.append(Row(cid, merged.cells[cid], tuple(entries)))
    return Table(title, columns, tuple(rows),
                 tuple(Note(i, tuple(where), lines) for i, (lines, where) in enumerate(notes.items(), 1)),
                 tuple(merged.warnings), merged)


def host_line(col: HostColumn) -> str:
    """``label: host-a, host-b (sm_90) — 1 pass, 1 fail``."""
    archs = f" ({', '.join(col.archs)})" if col.archs else ""
    return f"{col.label}: {', '.join(col.hostnames)}{archs} — {counts_text(col.counts)}"


def _grid(table: Table, cell: Callable[[object], str], bold: bool) -> tuple[list[str], list[list[str]]]:
    header = ["cell"] + [cell(c.label) for c in table.columns]
    rows = []
    for row in table.rows:
        out = [f"**{cell(row.cell_id)}**" if bold else cell(row.cell_id)]
        for te in row.entries:
            out.append("" if te is None else cell(te.text) + (f" [{te.note}]" if te.note else ""))
        rows.append(out)
    return header, rows


def render_text(table: Table) -> str:
    """For a terminal: every piece of foreign text on one line, control characters spelled out."""
    c = escape.clean
    lines = [c(table.title), ""] if table.title else []
    if not table.rows:
        return "\n".join(lines + ["(no results)"] + [f"warning: {c(w)}" for w in table.warnings]) + "\n"
    lines.append("Host types:" if len(table.columns) > 1 else "Host type:")
    lines += [f"  {c(host_line(col))}" for col in table.columns]
    lines.append("")
    header, rows = _grid(table, c, bold=False)
    lines.append(tabulate(rows, headers=header, tablefmt="simple_grid", disable_numparse=True))
    lines.append("")
    lines.append("Legend:")
    width = max(len(word(s)) for s in SHOWN)
    lines += [f"  {MARKS[s]} {word(s).ljust(width)}  {LEGEND[s]}" for s in SHOWN]
    if table.notes:
        lines += ["", "Notes:"]
        for note in table.notes:
            first, *rest = note.lines
            lines.append(f"  [{note.number}] {c(', '.join(note.where))}: {c(first)}")
            lines += [f"      {c(x)}" for x in rest]
    lines += [f"warning: {c(w)}" for w in table.warnings]
    return "\n".join(lines) + "\n"


def render_markdown(table: Table) -> str:
    """For a GitHub job summary or a pull request: nothing foreign formats, links, or hides what follows."""
    m = escape.markdown
    lines = [f"## {m(table.title)}", ""] if table.title else []
    if not table.rows:
        return "\n".join(lines + ["(no results)"] + [f"- warning: {m(w)}" for w in table.warnings]) + "\n"
    lines.append("**Host types**" if len(table.columns) > 1 else "**Host type**")
    lines.append("")
    for col in table.columns:
        archs = f" ({m(', '.join(col.archs))})" if col.archs else ""
        lines.append(f"- **{m(col.label)}**: {m(', '.join(col.hostnames))}{archs} — {counts_text(col.counts)}")
    lines.append("")
    header, rows = _grid(table, m, bold=True)
    lines.append(tabulate(rows, headers=header, tablefmt="github", disable_numparse=True))
    lines.append("")
    lines += ["<details><summary>Legend</summary>", ""]
    lines += [f"- {MARKS[s]} **{word(s)}**: {LEGEND[s]}" for s in SHOWN]
    lines += ["", "</details>"]
    if table.notes:
        lines += ["", "**Notes**", ""]
        for note in table.notes:
            where = ", ".join(f"**{m(w)}**" for w in note.where)
            lines.append(f"{note.number}. {where}: " + "<br>".join(m(x) for x in note.lines))
    if table.warnings:
        lines.append("")
        lines += [f"- warning: {m(w)}" for w in table.warnings]
    return "\n".join(lines) + "\n"
