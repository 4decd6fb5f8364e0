"""Plotly figure specs ({"data", "layout"}) as plain dicts: the page embeds them with json_script and
static/dashboard/dashboard.js draws them, so no chart code runs on the server beyond building lists."""
import html
import math

from analysis.buckets import STAGES
from analysis.wording import fmt

COLORS = {"t_queue": "#d95f02", "t_conn": "#7570b3", "t_first_token": "#1b9e77", "t_stream": "#66a61e",
          "t_post": "#e6ab02", "t_retry": "#a6761d", "p50": "#1f77b4", "p95": "#ff7f0e", "p99": "#d62728"}


def text(value) -> str:
    """A user-supplied string as Plotly shows it: Plotly reads a few HTML tags in labels, so escape them."""
    return html.escape(str(value), quote=False)


def readable(values: list, unit: str) -> dict:
    """Hover keys that show each point's value as users read it (analysis.wording.fmt: "25.7 s", "41%",
    "not measured"), not as Plotly would ("25.69264k")."""
    return {"customdata": [fmt(v, unit) for v in values],
            "hovertemplate": "%{fullData.name}: %{customdata}<extra>%{x}</extra>"}


def figure(data: list, title: str = "", y_title: str = "", x_title: str = "", **layout) -> dict:
    """A figure with the title top left and the legend in a row above the plot, clear of the axis labels."""
    base = {"title": {"text": title, "x": 0.01, "xanchor": "left", "y": 0.98, "yanchor": "top", "font": {"size": 14}},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "automargin": True},
            "xaxis": {"title": {"text": x_title}, "automargin": True},
            "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"}}
    for axis in ("xaxis", "yaxis"):  # callers add keys to an axis rather than replace it
        if axis in layout:
            layout[axis] = {**base[axis], **layout[axis]}
    return {"data": data, "layout": {**base, **layout}}


def time_axis(start, end) -> dict:
    """An x axis spanning the whole window, so one point or a gap does not rescale it."""
    return {"type": "date", "range": [start.isoformat(), end.isoformat()]}


def labelled(rows: list[dict], blank: str, noun: str) -> list[dict]:
    """Rows of a bounded grouping (queries.bucket_distribution_top_values) with a label for the x axis: the value,
    `blank` for "", and "others (N <noun>)" for the row pooling the rest."""
    return [{**r, "label": f"others ({r['others']} {noun})" if r.get("others") else r["value"] or blank}
            for r in rows]


def stacked_buckets(rows: list[dict], level: str, title: str) -> dict:
    """One stacked bar per row (route, segment...): each bucket's `level` percentile, in ms."""
    labels = [text(r["label"]) for r in rows]
    data = [{"type": "bar", "name": b, "x": labels, "y": [r["buckets"][b][level] for r in rows],
             "marker": {"color": COLORS[b]}, **readable([r["buckets"][b][level] for r in rows], "ms")} for b in STAGES]
    return figure(data, title, "ms", barmode="stack", xaxis={"type": "category"})


def percentile_lines(points: list[dict], key: str, title: str, window=None) -> dict:
    """p50/p95/p99 of points[i][key] over points[i]["at"]; window: (start, end) of the x axis."""
    x = [p["at"].isoformat() for p in points]
    data = [{"type": "scatter", "mode": "lines+markers", "name": f"{key} {level}", "x": x,
             "y": [p[key][level] for p in points], "line": {"color": COLORS[level]}, "connectgaps": False,
             **readable([p[key][level] for p in points], "ms")} for level in ("p50", "p95", "p99")]
    return figure(data, title, "ms", **({"xaxis": time_axis(*window)} if window else {}))


def rate_chart(points: list[dict], width_ms: int, title: str, window=None) -> dict:
    """Requests per second (bars) and error rate in % (line, right axis) per time bucket."""
    x = [p["at"].isoformat() for p in points]
    seconds = width_ms / 1000
    data = [
        {"type": "bar", "name": "requests/s", "x": x, "y": [round(p["requests"] / seconds, 3) for p in points],
         "marker": {"color": "#8da0cb"}},
        {"type": "scatter", "mode": "lines+markers", "name": "error %", "x": x, "yaxis": "y2",
         "y": [round(100 * p["errors"] / p["requests"], 2) if p["requests"] else None for p in points],
         "line": {"color": COLORS["p99"]}},
    ]
    errors = [v for v in data[1]["y"] if v is not None]
    return figure(data, title, "requests/s", **({"xaxis": time_axis(*window)} if window else {}),
                  yaxis2={"title": {"text": "error %"}, "overlaying": "y", "side": "right", "showgrid": False,
                          **even_ticks(max(errors, default=0))})


def even_ticks(top: float, count: int = 4) -> dict:
    """A 0-based axis with evenly spaced round ticks (0, 0.5, 1, 1.5) up to at least `top`: an overlaying axis
    left to Plotly follows the other axis's grid and reads 0.44, 0.89, 1.33."""
    raw = max(top, 1e-9) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return {"tickmode": "linear", "tick0": 0, "dtick": step, "range": [0, step * max(1, math.ceil(top / step))]}


# --- Scheduler and Connections pages -------------------------------------------------------------------------
SCHED_COLORS = {"queue": "#d95f02", "in_flight": "#1f77b4", "cap": "#52607a", "backlog": "#fdb863",
                "gap": "#d62728", "gap_fill": "rgba(214, 39, 40, 0.15)"}


def _r(value, digits=3):
    return None if value is None else round(value, digits)


def _mid(p: dict) -> str:
    return (p["start"] + (p["end"] - p["start"]) / 2).isoformat()


def gap_shapes(points: list[dict]) -> list[dict]:
    """Shaded rectangles over runs of adjacent buckets with backlog under cap (gap_ms > 0)."""
    runs = []
    for p in points:
        if not p["gap_ms"] > 0:
            continue
        if runs and runs[-1][1] == p["start"]:
            runs[-1][1] = p["end"]
        else:
            runs.append([p["start"], p["end"]])
    return [{"type": "rect", "xref": "x", "yref": "paper", "x0": a.isoformat(), "x1": b.isoformat(), "y0": 0, "y1": 1,
             "fillcolor": SCHED_COLORS["gap_fill"], "line": {"width": 0}, "layer": "below",
             "name": "backlog under cap", "legendgroup": "gap", "showlegend": i == 0} for i, (a, b) in enumerate(runs)]


def scheduler_chart(points: list[dict], instance: str, gap_fraction, cap, window=None) -> dict:
    """One instance: mean queue depth and in-flight per bucket (max as lighter lines), cap as a step line, and
    the buckets with backlog under cap shaded. `points` from analysis.panels.scheduler.instance_series; window:
    (start, end) of the x axis, the same on every instance so the small multiples line up."""
    x = [_mid(p) for p in points]

    def line(name, key, color, **style):
        return {"type": "scatter", "mode": "lines", "name": name, "x": x, "y": [_r(p[key]) for p in points],
                "line": {"color": color, **style}, "connectgaps": False}

    # The queue gets its own right axis: a deep queue would otherwise flatten in flight against the cap.
    data = [line("mean in flight", "in_flight", SCHED_COLORS["in_flight"], width=2),
            {**line("max in flight", "in_flight_max", SCHED_COLORS["in_flight"], width=1, dash="dot"), "opacity": 0.5},
            line("cap", "cap", SCHED_COLORS["cap"], width=2, dash="dash", shape="hv"),
            {**line("mean queue depth", "queue", SCHED_COLORS["queue"], width=2), "yaxis": "y2"},
            {**line("max queue depth", "queue_max", SCHED_COLORS["queue"], width=1, dash="dot"), "opacity": 0.5,
             "yaxis": "y2"}]
    share = "–" if gap_fraction is None else f"{gap_fraction:.2f}"
    title = f"{text(instance)} · gap_fraction {share} · cap {'unknown' if cap is None else cap}"
    return figure(data, title, "in flight / cap", shapes=gap_shapes(points), hovermode="x unified",
                  **({"xaxis": time_axis(*window)} if window else {}),
                  yaxis2={"title": {"text": "queue depth", "font": {"color": SCHED_COLORS["queue"]}},
                          "overlaying": "y", "side": "right", "rangemode": "tozero", "showgrid": False,
                          "tickmode": "auto"})


def backlog_chart(points: list[dict], title: str, window=None) -> dict:
    """Seconds of backlog per bucket summed over instances: at cap, under cap, and (when any) cap unknown."""
    x = [_mid(p) for p in points]
    parts = [("at_cap_ms", "backlog, all slots busy", SCHED_COLORS["backlog"]),
             ("gap_ms", "backlog under cap (idle slots)", SCHED_COLORS["gap"]),
             ("unknown_ms", "backlog, cap unknown", "#b8c2d6")]
    data = [{"type": "bar", "name": name, "x": x, "marker": {"color": color},
             "y": [_r(p[key] / 1000) for p in points]}
            for key, name, color in parts if key != "unknown_ms" or any(p[key] for p in points)]
    return figure(data, title, "seconds of backlog", barmode="stack", bargap=0,
                  **({"xaxis": time_axis(*window)} if window else {}))


def churn_scatter(points: list[dict], y_key: str, y_label: str, spearman, trend=None) -> dict:
    """One point per 1-minute window: new connections per success (x) against `y_key` (ms), the Spearman
    correlation in the title; `trend` ([x0, x1], [y0, y1]) draws the least-squares line."""
    data = [{"type": "scatter", "mode": "markers", "name": "minute", "marker": {"color": SCHED_COLORS["in_flight"]},
             "x": [_r(p["new_per_success"], 4) for p in points], "y": [_r(p[y_key], 1) for p in points],
             "customdata": [[f"{p['minute']:%Y-%m-%d %H:%M}", p["successes"], p["new_connections"]] for p in points],
             "hovertemplate": "%{customdata[0]} UTC<br>%{customdata[1]} successes, %{customdata[2]} new connections"
                              f"<br>new per success %{{x:.3f}}<br>{y_label} %{{y:.0f}} ms<extra></extra>"}]
    if trend:
        data.append({"type": "scatter", "mode": "lines", "name": "least-squares fit", "x": trend[0],
                     "y": [_r(v, 1) for v in trend[1]], "line": {"color": SCHED_COLORS["gap"], "dash": "dash"},
                     "hoverinfo": "skip"})
    rho = "–" if spearman is None else f"{spearman:.2f}"
    return figure(data, f"{y_label} per minute · Spearman ρ = {rho}", "ms", "new connections per success",
                  showlegend=False)


def churn_series(minutes: list[dict], title: str, window=None) -> dict:
    """Per minute: new connections per success (left axis) and TTFT p95 (ms, right axis)."""
    x = [m["minute"].isoformat() for m in minutes]
    data = [{"type": "scatter", "mode": "lines", "name": "new connections per success", "x": x,
             "y": [_r(m["new_connections"] / m["successes"], 4) if m["successes"] else None for m in minutes],
             "line": {"color": SCHED_COLORS["queue"]}, "connectgaps": False},
            {"type": "scatter", "mode": "lines", "name": "TTFT p95 (ms)", "x": x, "yaxis": "y2",
             "y": [_r(m["ttft_p95"], 1) for m in minutes], "line": {"color": SCHED_COLORS["in_flight"]},
             "connectgaps": False}]
    return figure(data, title, "new connections per success", hovermode="x unified",
                  **({"xaxis": time_axis(*window)} if window else {}),
                  yaxis2={"title": {"text": "TTFT p95 (ms)"}, "overlaying": "y", "side": "right", "rangemode": "tozero",
                          "showgrid": False, "tickmode": "auto"})


# --- Tenants and Prompt length pages ---------------------------------------------------------------------------
def _flat(name: str, labels: list, value, color: str) -> dict:
    """A dashed reference line across category bars (markers too, so one category still shows it)."""
    return {"type": "scatter", "mode": "lines+markers", "name": name, "x": labels, "y": [value] * len(labels),
            "line": {"color": color, "dash": "dash"}, "marker": {"symbol": "line-ew-open", "size": 14}}


def tenant_tails_chart(rows: list[dict], service: dict, title: str) -> dict:
    """TTFT p95 and total p95 bars per tenant (rows: {"tenant", "ttft_p95", "total_p95"}), grouped, with the
    service's p95s (service: {"ttft_p95", "total_p95"}) as dashed lines: a tenant far above them stands out."""
    labels = [text(r["tenant"] or "(no tenant)") for r in rows]
    data = [{"type": "bar", "name": "tenant TTFT p95", "x": labels, "y": [r["ttft_p95"] for r in rows],
             "marker": {"color": COLORS["t_first_token"]}},
            {"type": "bar", "name": "tenant total p95", "x": labels, "y": [r["total_p95"] for r in rows],
             "marker": {"color": "#8da0cb"}},
            _flat("service TTFT p95", labels, service["ttft_p95"], "#0b5e45"),
            _flat("service total p95", labels, service["total_p95"], "#33405c")]
    return figure(data, title, "ms", barmode="group", xaxis={"type": "category"})


def slot_share_chart(rows: list[dict], threshold: float, title: str) -> dict:
    """Per tenant (rows: {"tenant", "slot_share", "arrival_share"}, 0..1): % of busy slots held during backlog
    next to % of arrivals, and the noisy-neighbour threshold: slots far above arrivals make others wait."""
    labels = [text(r["tenant"] or "(no tenant)") for r in rows]

    def pct(value):
        return None if value is None else round(100 * value, 2)
    data = [{"type": "bar", "name": "% of busy slots during backlog", "x": labels,
             "y": [pct(r["slot_share"]) for r in rows], "marker": {"color": COLORS["t_queue"]}},
            {"type": "bar", "name": "% of arrivals", "x": labels, "y": [pct(r["arrival_share"]) for r in rows],
             "marker": {"color": "#8da0cb"}},
            _flat("noisy-neighbour threshold", labels, pct(threshold), COLORS["p99"])]
    return figure(data, title, "%", barmode="group", xaxis={"type": "category"})


def segment_ttft_chart(rows: list[dict], title: str) -> dict:
    """TTFT p50 and p95 per prompt-length segment (rows: {"label", "buckets"}, in prompt-length order)."""
    labels = [text(r["label"]) for r in rows]
    data = [{"type": "scatter", "mode": "lines+markers", "name": f"TTFT {level}", "x": labels,
             "y": [r["buckets"]["ttft"][level] for r in rows], "line": {"color": COLORS[level]}}
            for level in ("p50", "p95")]
    return figure(data, title, "ms", xaxis={"type": "category"})


# --- Runs page ---------------------------------------------------------------------------------------------------
RUN_COLORS = {"attempt": "#4c78a8", "failed attempt": "#d62728", "retry back-off": "#c7c7c7",
              "other span": "#9aa5b8", "failed span": "#f4a3a3", "stage connect": COLORS["t_conn"],
              "stage tokenize": "#17becf", "stage prompt_build": "#bcbd22", "stage policy": "#e377c2",
              "stage retrieval": "#8c564b", "stage tool": "#9467bd", "stage network": "#2ca02c",
              "stage model": "#1f77b4", "stage post": "#ff9896", "network (between layers)": "#98df8a"}
SPARE_COLORS = ("#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")


ROW_HEIGHT = 0.7  # a waterfall bar's height in rows, set on every bar


def waterfall(rows: list[dict], title: str) -> dict:
    """Horizontal bars, one line per row (top to bottom); each row's segments {"group", "base", "ms", "hover",
    optional "text" (drawn inside the bar)} are drawn from `base` ms for `ms` ms, one legend entry (colour) per
    group.

    TRICKY: on a numeric axis Plotly makes a bar 0.8 x the smallest gap between its own trace's positions, so a
    group on rows 2 and 8 would draw bars ~5 rows tall over their neighbours: every bar gets width ROW_HEIGHT."""
    groups: dict[str, dict] = {}
    for i, row in enumerate(rows):
        for seg in row["segments"]:
            g = groups.setdefault(seg["group"], {"y": [], "x": [], "base": [], "width": [], "hovertext": [],
                                                 "text": []})
            g["y"].append(i)
            g["x"].append(seg["ms"])
            g["base"].append(seg["base"])
            g["width"].append(ROW_HEIGHT)
            g["hovertext"].append(text(seg["hover"]))
            g["text"].append(text(seg.get("text", "")))
    spare = iter(SPARE_COLORS * (1 + len(groups) // len(SPARE_COLORS)))
    data = [{"type": "bar", "orientation": "h", "name": text(name), **g, "hovertemplate": "%{hovertext}<extra></extra>",
             "textposition": "auto", "insidetextanchor": "start",
             "marker": {"color": COLORS.get(name) or RUN_COLORS.get(name) or next(spare)}}
            for name, g in groups.items()]
    data += instants(rows, data)
    labels = [text(("\u00a0\u00a0" * (r["depth"] - 1) + "└ " if r["depth"] else "") + r["label"]) for r in rows]
    # the legend in its row above the plot (figure's default), under the title: below, it met the axis title
    return figure(data, title, x_title="ms since the run's first span started", barmode="overlay",
                  height=170 + 24 * len(rows), margin={"t": 90, "r": 30, "b": 60, "l": 230},
                  yaxis={"tickvals": list(range(len(rows))), "ticktext": labels, "autorange": "reversed",
                         "showgrid": False, "zeroline": False})


def instants(rows: list[dict], bars: list[dict]) -> list[dict]:
    """A mark for each segment too short to see as a bar (a failed attempt that took 0 ms, a 1 ms span on a 30 s
    axis): a bar that narrow draws nothing, and the row would look empty. Coloured as its group's bars."""
    span = max((seg["base"] + seg["ms"] for row in rows for seg in row["segments"]), default=0)
    colours = {bar["name"]: bar["marker"]["color"] for bar in bars}
    marks: dict[str, dict] = {}
    for i, row in enumerate(rows):
        for seg in row["segments"]:
            if seg["ms"] <= span * 0.004:
                m = marks.setdefault(seg["group"], {"x": [], "y": [], "hovertext": []})
                m["x"].append(seg["base"] + seg["ms"] / 2)
                m["y"].append(i)
                m["hovertext"].append(text(seg["hover"]))
    return [{"type": "scatter", "mode": "markers", "name": text(group), "showlegend": False, **m,
             "hovertemplate": "%{hovertext}<extra></extra>",
             "marker": {"symbol": "diamond", "size": 11, "color": colours[text(group)],
                        "line": {"width": 1, "color": "#222"}}} for group, m in marks.items()]


# The Engine page's charts, top to bottom after TTFT: {id suffix: (title, unit, [(label, EngineMinute field, scale)])}
ENGINE_PANELS = {
    "kv": ("KV cache use", "%", [("KV cache", "kv_cache_usage", 100.0)]),
    "requests": ("Requests running and waiting", "requests", [("running", "in_flight", 1.0),
                                                               ("waiting", "queue_depth", 1.0)]),
    "preemptions": ("Preemptions", "per min", [("preemptions", "preemptions_per_min", 1.0)]),
    "gpu": ("GPU utilisation", "%", [("GPU", "gpu_utilization", 100.0)]),
    "memory": ("GPU memory", "GiB", [("used", "gpu_memory_used_bytes", 1 / 2**30),
                                     ("free", "gpu_memory_free_bytes", 1 / 2**30)]),
    "restarts": ("Restarts", "count", [("restarts", "restarts", 1.0)]),
}


def engine_charts(minutes: list, ttft: list[dict], window) -> list[tuple[str, dict]]:
    """One chart per signal, each on the window's time axis: TTFT p95 from the traces, then each engine signal
    with a line per instance (a signal no instance sends has no chart). [(element id, figure)]."""
    axis = time_axis(*window)
    compact = {"orientation": "v", "x": 1.01, "xanchor": "left", "y": 1, "yanchor": "top", "font": {"size": 11}}
    out = [("engine-ttft", figure([{"type": "scatter", "mode": "lines", "name": "TTFT p95",
                                    "x": [m["minute"].isoformat() for m in ttft], "y": [m["ttft_p95"] for m in ttft],
                                    "line": {"color": "#444"}, **readable([m["ttft_p95"] for m in ttft], "ms")}],
                                  "TTFT p95 per minute (traces)", "ms", xaxis=axis, height=240,
                                  margin={"t": 40, "b": 30, "r": 170}, showlegend=False))]
    instances = sorted({m.instance for m in minutes})
    for key, (title, unit, series) in ENGINE_PANELS.items():
        data = []
        for instance in instances:
            mine = [m for m in minutes if m.instance == instance]
            for label, name, scale in series:
                values = [getattr(m, name) for m in mine]
                if all(v is None for v in values):
                    continue  # not measured: no line, rather than a line at 0
                data.append({"type": "scatter", "mode": "lines+markers" if name == "restarts" else "lines",
                             "name": instance if len(series) == 1 else f"{instance} {label}",
                             "x": [m.minute.isoformat() for m in mine],
                             "y": [None if v is None else round(v * scale, 3) for v in values],
                             "legendgroup": instance})
        if data:
            # the legend beside the plot, compact: one entry per instance (and series), never over the plot
            out.append((f"engine-{key}", figure(data, title, unit, xaxis=axis, height=240, hovermode="x unified",
                                                margin={"t": 40, "b": 30, "r": 170}, legend=compact)))
    return out


def engine_queue_chart(minutes: list, window) -> dict:
    """Requests waiting and running per instance and minute, as the engine's gauges report them."""
    data = []
    for instance in sorted({m.instance for m in minutes}):
        mine = [m for m in minutes if m.instance == instance]
        for label, name in (("waiting", "queue_depth"), ("running", "in_flight")):
            data.append({"type": "scatter", "mode": "lines", "name": f"{instance} {label}",
                         "x": [m.minute.isoformat() for m in mine], "y": [getattr(m, name) for m in mine]})
    return figure(data, "Queue depth and in flight from the engine's metrics (mean per minute)", "requests",
                  xaxis=time_axis(*window), hovermode="x unified")


def service_map(edges: list) -> dict:
    """A Sankey of calls: gateways on the left, the engines they call on the right, a link's width its calls."""
    names = list(dict.fromkeys([e.gateway for e in edges] + [e.engine for e in edges]))
    index = {n: i for i, n in enumerate(names)}
    hover = [f"{text(e.gateway)} → {text(e.engine)}: {e.calls} calls, network TTFT p95 "
             f"{fmt(e.buckets['t_network_ttft']['p95'], 'ms')}" for e in edges]
    data = [{"type": "sankey", "orientation": "h", "arrangement": "snap",
             "node": {"label": [text(n) for n in names], "pad": 18, "thickness": 16},
             "link": {"source": [index[e.gateway] for e in edges], "target": [index[e.engine] for e in edges],
                      "value": [e.calls for e in edges], "customdata": hover,
                      "hovertemplate": "%{customdata}<extra></extra>"}}]
    return figure(data, "Calls between services", height=120 + 40 * len(names))
