"""The worksheet as a spreadsheet (CSV rows) and as readable lines (`manage.py capacity --format text`).

CSV cells are plain numbers (a spreadsheet computes with them), empty where unknown; the text reads as the pages do
(analysis.wording.fmt: "not measured" for the unknown, with the reason beside it).
"""
from analysis.capacity.types import Capacity, Scope
from analysis.windows import iso
from analysis.wording import fmt

COLUMNS = ("scope", "runs", "attempts", "peak_rps", "peak_at", "mean_rps", "tokens_in_mean", "tokens_in_p95",
           "tokens_out_mean", "tokens_out_p95", "batching_factor", "instances", "gpu_hours",
           "cost_per_1k_requests_usd")
LEVEL_COLUMNS = ("load", "unit", "instance_minutes", "values", "metric", "percentile", "value_ms", "objective_ms")


def worksheet_rows(sheet: Capacity) -> list[list]:
    """A header, the service's row (scope "all") and one row per region (scope: its name, "unknown" for none)."""
    return [list(COLUMNS)] + [_row(s) for s in sheet.scopes]


def _row(s: Scope) -> list:
    cells = [s.label, s.runs, s.attempts, s.peak_rps, iso(s.peak_at) if s.peak_at else None, s.mean_rps,
             s.tokens_in.mean, s.tokens_in.p95, s.tokens_out.mean, s.tokens_out.p95, s.batching_factor, s.instances,
             s.gpu_hours, s.cost_per_1k_requests_usd]
    return ["" if c is None else round(c, 6) if isinstance(c, float) else c for c in cells]


def level_rows(sheet: Capacity) -> list[list]:
    """A header and one row per load level of the latency-vs-load curve."""
    c = sheet.latency_vs_load
    rows = [list(LEVEL_COLUMNS)]
    for p in c.levels if c else []:
        rows.append([round(p["load"], 6), c.unit, p["minutes"], p["values"], c.objective.metric, c.percentile,
                     "" if p["value_ms"] is None else round(p["value_ms"], 3), c.objective.threshold_ms])
    return rows


def text_lines(sheet: Capacity) -> list[str]:
    """The worksheet, its regions, latency against load and the notes, as the command prints them."""
    w, why = sheet.worksheet, sheet.reasons
    lines = [f"{sheet.service}{f' {sheet.route}' if sheet.route else ''}: capacity {iso(sheet.start)} – "
             f"{iso(sheet.end)} (requests are runs: {w.runs} runs, {w.attempts} attempts)"]
    lines += [f"  {name:<20}{value}" for name, value in _fields(w, sheet, why)]
    if sheet.regions:
        lines += ["", "regions:"] + [f"  {r.label}: {_region(r)}" for r in sheet.regions]
    c = sheet.latency_vs_load
    if c is not None:
        lines += ["", f"latency against load ({c.unit}; {c.source}):", f"  objective: {c.objective.text()}"]
        lines += [f"  {fmt(p['load']):>8}  {c.objective.label} {fmt(p['value_ms'], 'ms')}  ({p['minutes']} "
                  f"instance-minutes, {p['values']} values)" for p in c.levels]
        lines.append(f"  {c.sentence or c.reason}")
    return lines + ([""] + ["notes:"] + [f"  - {n}" for n in sheet.notes] if sheet.notes else [])


def _fields(w: Scope, sheet: Capacity, why: dict) -> list[tuple[str, str]]:
    def known(name: str, text: str) -> str:
        return text if name not in why else f"not measured: {why[name]}"
    at = f" at {w.peak_at:%H:%M} UTC" if w.peak_at else ""
    gpus = sheet.gpus.get("per_instance", {})
    return [
        ("peak", known("peak_rps", f"{fmt(w.peak_rps)} requests/s{at}")),
        ("mean", known("mean_rps", f"{fmt(w.mean_rps)} requests/s")),
        ("tokens in", known("tokens_in", f"mean {fmt(w.tokens_in.mean)}, p95 {fmt(w.tokens_in.p95)}")),
        ("tokens out", known("tokens_out", f"mean {fmt(w.tokens_out.mean)}, p95 {fmt(w.tokens_out.p95)}")),
        ("batching factor", known("batching_factor", f"{fmt(w.batching_factor)} sequences in flight per instance "
                                                     f"while busy ({sheet.batching_source})")),
        ("instances", str(w.instances)),
        ("GPU-hours", known("gpu_hours", f"{fmt(w.gpu_hours)} ({_gpus_text(gpus)} GPUs per instance; "
                                         f"{', '.join(sheet.gpus.get('sources', {}))})")),
        ("cost / 1k requests", known("cost_per_1k_requests_usd", f"${fmt(w.cost_per_1k_requests_usd)}")),
    ]


def _gpus_text(per_instance: dict) -> str:
    low, high = per_instance.get("min"), per_instance.get("max")
    return "–" if low is None else str(low) if low == high else f"{low}–{high}"


def _region(r: Scope) -> str:
    return (f"peak {fmt(r.peak_rps)} requests/s, mean {fmt(r.mean_rps)}, tokens in {fmt(r.tokens_in.mean)} / out "
            f"{fmt(r.tokens_out.mean)}, batching {fmt(r.batching_factor)}, {r.instances} instance"
            f"{'s' if r.instances != 1 else ''}, "
            f"{fmt(r.gpu_hours)} GPU-hours, cost / 1k {fmt(r.cost_per_1k_requests_usd)}")
