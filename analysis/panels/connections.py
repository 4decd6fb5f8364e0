"""The Connections page's numbers: new connections per success against TTFT per 1-minute window, with the
correlations the diagnosis's connection_churn branch reads (analysis.diagnosis.evidence.churn, not recomputed)."""
from dataclasses import dataclass

from analysis.diagnosis import evidence
from analysis.diagnosis.thresholds import configured
from analysis.evidence_types import Churn
from analysis.reads import queries
from analysis.scope import Scope
from analysis.stats import pairs


@dataclass(frozen=True)
class Connections:
    """minutes: queries.churn_windows' rows; churn: the diagnosis's Churn of them; points: the minutes it
    correlates (evidence.churn_windows_kept); trend: the least-squares line of new_per_success against ttft_p95
    with churn's slope (trend_line); totals: attempts, new_connections, successes summed; thresholds: the
    diagnosis's per_success and spearman thresholds."""
    minutes: list[dict]
    churn: Churn
    points: list[dict]
    trend: tuple[list[float], list[float]] | None
    totals: dict
    thresholds: dict


def build(scope: Scope) -> Connections:
    minutes = queries.churn_windows(scope)
    churn = evidence.churn(minutes)
    points = evidence.churn_windows_kept(minutes)
    t = configured()
    return Connections(
        minutes=minutes, churn=churn, points=points,
        trend=trend_line(points, "new_per_success", "ttft_p95", churn.slope),
        totals={k: sum(m[k] for m in minutes) for k in ("attempts", "new_connections", "successes")},
        thresholds={"per_success": t.new_connections_per_success, "spearman": t.churn_spearman})


def trend_line(points: list[dict], x: str, y: str, slope) -> tuple[list[float], list[float]] | None:
    """The least-squares line through (x, y) with evidence's slope, drawn across the points' x range."""
    xs, ys = pairs(points, x, y)
    if slope is None or not xs:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    ends = [min(xs), max(xs)]
    return ends, [my + slope * (v - mx) for v in ends]
