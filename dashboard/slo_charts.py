"""The SLOs page's chart: an SLO's error budget burning down over its window, as a Plotly spec (dashboard/charts.py)."""
from analysis.reads.slos import SloStatus
from dashboard.charts import figure, readable, time_axis

LINE, ZERO = "#1f77b4", "#d62728"


def burn_down(status: SloStatus, title: str) -> dict:
    """Budget remaining (%) at the end of each hour of the window, with the 0 line (below it: overspent)."""
    x = [at.isoformat() for at, _ in status.burn_down]
    left = [None if value is None else round(value * 100, 3) for _, value in status.burn_down]
    data = [{"type": "scatter", "mode": "lines", "name": "budget remaining", "x": x, "y": left,
             "line": {"color": LINE, "shape": "hv"}, "connectgaps": False,
             **readable([None if value is None else value for _, value in status.burn_down], "%")},
            {"type": "scatter", "mode": "lines", "name": "budget spent", "x": [x[0], x[-1]] if x else [], "y": [0, 0],
             "line": {"color": ZERO, "dash": "dash", "width": 1}, "hoverinfo": "skip"}]
    return figure(data, title, "error budget remaining (%)", xaxis=time_axis(status.start, status.end),
                  yaxis={"rangemode": "normal", "ticksuffix": "%"})
