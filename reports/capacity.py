"""The weekly review's capacity section: the service's worksheet this week against the week before (analysis.capacity,
the numbers of the API and the Capacity page)."""
from dataclasses import replace
from datetime import timedelta

from analysis.panels.capacity import build
from analysis.scope import Scope

# (key, label, unit for analysis.wording.fmt) of the worksheet's numbers the review compares
ROWS = (("peak_rps", "peak requests/s", ""), ("mean_rps", "mean requests/s", ""),
        ("tokens_in", "tokens in (mean)", ""), ("tokens_out", "tokens out (mean)", ""),
        ("batching_factor", "batching factor", ""), ("instances", "instances", ""), ("gpu_hours", "GPU-hours", ""),
        ("cost_per_1k_requests_usd", "cost per 1,000 requests (USD)", ""))


def week_over_week(week: Scope) -> dict:
    """{"rows": [{"key", "label", "this", "last", "change"}], "regions": names this week, "headroom": this week's
    latency-vs-load sentence, "knee_load", "unit", "reasons": this week's}. change: relative (0.5 = +50 %), None when
    either side is unknown or last week's is 0."""
    this = build(week)
    last = build(replace(week, start=week.start - timedelta(days=7), end=week.start))
    rows = []
    for key, label, _ in ROWS:
        now, before = _value(this.worksheet, key), _value(last.worksheet, key)
        rows.append({"key": key, "label": label, "this": now, "last": before, "change": _change(now, before)})
    curve = this.latency_vs_load
    return {"rows": rows, "regions": [r.label for r in this.regions],
            "headroom": (curve.sentence or curve.reason) if curve else None,
            "knee_load": curve.knee_load if curve else None, "unit": curve.unit if curve else None,
            "reasons": this.reasons}


def _value(scope, key: str):
    value = getattr(scope, key)
    return value.mean if key.startswith("tokens_") else value


def _change(now, before):
    if now is None or before is None or before == 0:
        return None
    return (now - before) / before
