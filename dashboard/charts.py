"""Plotly figure specs ({"data", "layout"}) as plain dicts: the page embeds them with json_script and
static/dashboard/dashboard.js draws them, so no chart code runs on the server beyond building lists."""
import html

STACK = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post")
COLORS = {"t_queue": "#d95f02", "t_conn": "#7570b3", "t_first_token": "#1b9e77", "t_stream": "#66a61e",
          "t_post": "#e6ab02", "t_retry": "#a6761d", "p50": "#1f77b4", "p95": "#ff7f0e", "p99": "#d62728"}


def text(value) -> str:
    """A user-supplied string as Plotly shows it: Plotly reads a few HTML tags in labels, so escape them."""
    return html.escape(str(value), quote=False)


def figure(data: list, title: str = "", y_title: str = "", x_title: str = "", **layout) -> dict:
    base = {"title": {"text": title}, "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
            "xaxis": {"title": {"text": x_title}}, "legend": {"orientation": "h", "y": -0.2}}
    return {"data": data, "layout": {**base, **layout}}


def stacked_buckets(rows: list[dict], level: str, title: str) -> dict:
    """One stacked bar per row (route, segment...): each bucket's `level` percentile, in ms."""
    labels = [text(r["label"]) for r in rows]
    data = [{"type": "bar", "name": b, "x": labels, "y": [r["buckets"][b][level] for r in rows],
             "marker": {"color": COLORS[b]}} for b in STACK]
    return figure(data, title, "ms", barmode="stack", xaxis={"type": "category"})


def percentile_lines(points: list[dict], key: str, title: str) -> dict:
    """p50/p95/p99 of points[i][key] over points[i]["at"]."""
    x = [p["at"].isoformat() for p in points]
    data = [{"type": "scatter", "mode": "lines+markers", "name": f"{key} {level}", "x": x,
             "y": [p[key][level] for p in points], "line": {"color": COLORS[level]}, "connectgaps": False}
            for level in ("p50", "p95", "p99")]
    return figure(data, title, "ms")


def rate_chart(points: list[dict], width_ms: int, title: str) -> dict:
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
    return figure(data, title, "requests/s",
                  yaxis2={"title": {"text": "error %"}, "overlaying": "y", "side": "right", "rangemode": "tozero"})
