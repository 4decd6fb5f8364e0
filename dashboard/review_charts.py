"""A weekly review (reports/) as charts (Plotly dicts) and as one self-contained HTML file (plotly.js inlined: works offline)."""
from functools import lru_cache

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from analysis.buckets import PARTS
from dashboard import charts
from dashboard.finders import _SOURCE


@lru_cache(maxsize=1)
def plotly_js() -> str:
    # "</" cannot close the inline <script> early once escaped (the shipped file has none; be sure anyway)
    return (_SOURCE / "plotly.min.js").read_text().replace("</", "<\\/")


def service_charts(s: dict, index: int, weeks: tuple[str, str]) -> list[tuple[str, dict]]:
    this_week, last_week = weeks
    levels = [f"{b} {lvl}" for b in ("ttft", "total") for lvl in ("p50", "p95", "p99")]
    pct = [{"type": "bar", "name": name, "x": levels,
            "y": [s["percentiles"][lvl.split()[0]][lvl.split()[1]][side] for lvl in levels]}
           for name, side in ((last_week, "last"), (this_week, "this"))]
    dom = [{"type": "bar", "name": name, "x": list(PARTS), "y": [s["dominance"][b][side] for b in PARTS]}
           for name, side in ((last_week, "last"), (this_week, "this"))]
    gap = [{"type": "scatter", "mode": "lines+markers", "name": key, "x": [d["day"] for d in s["days"]],
            "y": [d[key] for d in s["days"]]} for key in ("gap_fraction", "new_connections_per_success")]
    tenants = [{"type": "bar", "name": "TTFT p95", "x": [charts.text(t["tenant"]) for t in s["tenants"]],
                "y": [t["ttft_p95"] for t in s["tenants"]]}]
    name = charts.text(s["service"])
    return [
        (f"pct-{index}", charts.figure(pct, f"{name}: percentiles, week over week", "ms", barmode="group")),
        (f"dom-{index}", charts.figure(dom, f"{name}: bucket p95 / total p95", "share", barmode="group")),
        (f"gap-{index}", charts.figure(gap, f"{name}: gap_fraction and connection churn per day", "ratio")),
        (f"ten-{index}", charts.figure(tenants, f"{name}: worst tenants by TTFT p95", "ms")),
    ]


def context(review) -> dict:
    data = review.data
    services = [(s, service_charts(s, i, (data["week"], data["previous_week"])))
                for i, s in enumerate(data["services"])]
    return {"review": review, "data": data, "services": services}


def standalone(review) -> str:
    return render_to_string("reports/weekly.html", {**context(review), "plotly_js": mark_safe(plotly_js())})
