"""Plotly specs of incidents: the shaded bands other pages lay on their time axes, the incident page's per-minute
series against the baseline band, and its causes and scope bars. Plain dicts, as dashboard/charts.py."""
from datetime import datetime

from dashboard.charts import COLORS, figure, text, time_axis

BAND_FILL = "rgba(214, 39, 40, 0.13)"  # an incident on a time axis
BASELINE_FILL = "rgba(27, 158, 119, 0.18)"  # the baseline's p50..p95 range
LABELS = {"ttft": "TTFT", "total": "total"}


def _iso(t: datetime) -> str:
    return t.isoformat()


def bands(incidents: list, now: datetime) -> list[dict]:
    """One shaded rectangle per incident over the whole plot height, from onset to end (to `now` while open),
    named by its verdict in the legend (once per verdict)."""
    seen, shapes = set(), []
    for i in incidents:
        label = f"incident: {i.verdict}" + (" (ongoing)" if i.end is None else "")
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": _iso(i.start), "x1": _iso(i.end or now),
                       "y0": 0, "y1": 1, "fillcolor": BAND_FILL, "line": {"width": 0}, "layer": "below",
                       "name": text(label), "legendgroup": "incident", "showlegend": label not in seen})
        seen.add(label)
    return shapes


def banded(spec: dict, shapes: list[dict]) -> dict:
    """`spec` with the incident bands added to its own shapes (gap shading and the like stay)."""
    if not shapes:
        return spec
    return {**spec, "layout": {**spec["layout"], "shapes": [*spec["layout"].get("shapes", []), *shapes]}}


def with_bands(charts: list[tuple[str, dict]], shapes: list[dict], ids=None) -> list[tuple[str, dict]]:
    """A page's (id, spec) charts with the bands on those named in `ids` (time axes; None: every chart)."""
    return [(cid, banded(spec, shapes) if ids is None or cid in ids else spec) for cid, spec in charts]


def timeline(incidents: list, window: tuple[datetime, datetime], now: datetime, title: str) -> dict:
    """A bare time axis over the window with the incidents as bands (for pages without a time series)."""
    return figure([], title, height=150, margin={"t": 60, "r": 30, "b": 40, "l": 30}, shapes=bands(incidents, now),
                  xaxis=time_axis(*window), yaxis={"visible": False, "range": [0, 1]}, showlegend=True)


def strip(incidents: list, window: tuple[datetime, datetime], now: datetime) -> dict:
    """Every service's incidents on one time axis: a row per service, a bar per incident from onset to end (to
    `now` while open), named by its verdict on hover (the Overview's incidents strip)."""
    services = sorted({i.service for i in incidents})
    traces = [{"type": "scatter", "mode": "lines", "x": [_iso(i.start), _iso(i.end or now)],
               "y": [i.service, i.service], "line": {"width": 12, "color": COLORS["t_queue"] if i.end else "#d62728"},
               "name": text(f"#{i.pk} {i.verdict}"), "hovertemplate": text(f"#{i.pk} {i.verdict}") + "<extra></extra>",
               "showlegend": False} for i in incidents]
    return figure(traces, "Incidents of every service in the range", height=80 + 28 * len(services),
                  margin={"t": 40, "r": 30, "b": 40, "l": 160}, xaxis=time_axis(*window),
                  yaxis={"type": "category", "categoryarray": services, "automargin": True})


def _level(side: dict, metric: str, level: str):
    holder = side.get("buckets", {}) if metric not in ("ttft", "total") else side
    return (holder.get(metric) or {}).get(level)


def series_chart(points: list[dict], metric: str, baseline: dict, span: tuple[datetime, datetime],
                 window: tuple[datetime, datetime]) -> dict:
    """`metric`'s p95 per minute (points from analysis.reads.queries.incident_series; None where not measured), the
    baseline's p50..p95 band with its p95 dashed, and the incident [span) shaded."""
    x = [_iso(p["at"]) for p in points]
    low, high = _level(baseline, metric, "p50"), _level(baseline, metric, "p95")
    data = [{"type": "scatter", "mode": "lines+markers", "name": f"{LABELS.get(metric, metric)} p95 per minute",
             "x": x, "y": [p[metric]["p95"] for p in points], "connectgaps": False,
             "line": {"color": COLORS.get(metric, COLORS["p95"])}}]
    shapes = [{"type": "rect", "xref": "x", "yref": "paper", "x0": _iso(span[0]), "x1": _iso(span[1]), "y0": 0,
               "y1": 1, "fillcolor": BAND_FILL, "line": {"width": 0}, "layer": "below", "name": "incident",
               "showlegend": True}]
    if high is not None:
        data.append({"type": "scatter", "mode": "lines", "name": "baseline p95", "x": [_iso(w) for w in window],
                     "y": [high, high], "line": {"color": "#0b5e45", "dash": "dash"}, "hoverinfo": "y"})
        shapes.append({"type": "rect", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": low if low is not None
                       else high, "y1": high, "fillcolor": BASELINE_FILL, "line": {"width": 0}, "layer": "below",
                       "name": "baseline p50–p95", "showlegend": True})
    return figure(data, f"{LABELS.get(metric, metric)} p95 per minute against its baseline", "ms",
                  xaxis=time_axis(*window), shapes=shapes, hovermode="x unified")


def share_bars(items: list[dict], label, title: str, color: str, x_title: str = "% of the latency increase") -> dict:
    """Horizontal bars of shares (0..1 shown in %), largest on top; `label(item)` names a bar (escaped here)."""
    names = [text(label(i)) for i in items]
    data = [{"type": "bar", "orientation": "h", "name": "share", "x": [round(100 * (i.get("share") or 0), 1)
                                                                       for i in items],
             "y": names, "marker": {"color": color}, "hovertemplate": "%{y}: %{x}%<extra></extra>"}]
    return figure(data, title, x_title=x_title, showlegend=False,
                  height=120 + 34 * max(len(items), 1), yaxis={"type": "category", "autorange": "reversed"},
                  xaxis={"range": [0, 100]})
