"""The Capacity page's figure: the objective's percentile per load level, the knee and the peak marked."""
import math

from analysis.capacity.load import MIN_VALUES, LoadCurve
from analysis.wording import fmt
from dashboard.charts import even_ticks, figure, readable

COLORS = {"latency": "#ff7f0e", "minutes": "rgba(141, 160, 203, 0.45)", "objective": "#d62728", "knee": "#52607a",
          "peak": "#1f77b4"}
LOG_SPREAD = 20  # a y axis whose largest value is this many times its smallest is drawn logarithmic


def load_chart(c: LoadCurve) -> dict:
    """Bars of instance-minutes per level (right axis), the percentile per level (a hollow marker where a level has
    fewer than MIN_VALUES values: shown, not judged), the objective as a dashed line, the knee and the peak as
    vertical lines."""
    x = [round(p["load"], 3) for p in c.levels]
    y = [p["value_ms"] for p in c.levels]
    known = [v for v in y if v is not None] + [c.objective.threshold_ms]
    data = [
        {"type": "bar", "name": "instance-minutes", "x": x, "y": [p["minutes"] for p in c.levels], "yaxis": "y2",
         "marker": {"color": COLORS["minutes"]}, "hovertemplate": "%{y} instance-minutes at %{x}<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": c.objective.label, "x": x, "y": y,
         "line": {"color": COLORS["latency"]}, "connectgaps": True, **readable(y, "ms"),
         "marker": {"size": 8, "symbol": ["circle" if p["values"] >= MIN_VALUES else "circle-open" for p in c.levels]}},
        # a trace, not a shape: a shape's y on a log axis would have to be given as its log10
        {"type": "scatter", "mode": "lines", "name": f"objective {fmt(c.objective.threshold_ms, 'ms')}",
         "x": [0, max(x + [c.peak_load or 0]) * 1.05], "y": [c.objective.threshold_ms] * 2, "hoverinfo": "skip",
         "line": {"color": COLORS["objective"], "dash": "dash"}},
    ]
    marks = [(c.knee_load, f"knee {fmt(c.knee_load)}", "knee"), (c.peak_load, f"peak {fmt(c.peak_load)}", "peak")]
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": v, "x1": v, "y0": 0, "y1": 1,
               "line": {"color": COLORS[kind], "dash": "dot" if kind == "peak" else "solid", "width": 2}}
              for v, _, kind in marks if v is not None]
    notes = [{"x": v, "y": 1, "xref": "x", "yref": "paper", "text": text, "showarrow": False, "yanchor": "bottom",
              "font": {"color": COLORS[kind]}} for v, text, kind in marks if v is not None]
    return figure(data, f"{c.objective.label} by load", "ms", c.unit, shapes=shapes, annotations=notes,
                  yaxis=_latency_axis(known),
                  yaxis2={"title": {"text": "instance-minutes"}, "overlaying": "y", "side": "right", "showgrid": False,
                          **even_ticks(max((p["minutes"] for p in c.levels), default=1))},
                  legend={"orientation": "h", "x": 0, "y": 1.12, "yanchor": "bottom"}, margin={"t": 110})


def _latency_axis(values: list[float]) -> dict:
    """Linear, or logarithmic when the values spread over LOG_SPREAD times, with ticks at powers of ten read as
    durations ("100 ms", "1 s", "10 s"), not Plotly's 2, 5 between them."""
    if min(values) <= 0 or max(values) / min(values) < LOG_SPREAD:
        return {"type": "linear"}
    ticks = [10.0 ** k for k in range(math.floor(math.log10(min(values))), math.ceil(math.log10(max(values))) + 1)]
    return {"type": "log", "tickvals": ticks, "ticktext": [fmt(t, "ms") for t in ticks]}
