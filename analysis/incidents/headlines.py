"""Stored incidents as people read them: duration, top cause, scope, peak vs baseline, and the page's address.

One wording for the CLI, the dashboard, the alert messages and the weekly review, so an incident reads the same
everywhere (numbers through analysis.wording). Pure apart from incident_url, which reads PUBLIC_BASE_URL.
"""
from datetime import datetime, timezone
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from analysis import buckets
from analysis.wording import fmt, ratio

HEADLINE = ("ttft", "total")  # what the user waits for: the peak vs baseline sentence names one of these
LABELS = {"ttft": "TTFT", "total": "total"}


def until(incident, now: datetime | None = None) -> datetime:
    """The incident's end, or `now` (default: the clock) while it is open."""
    return incident.end or now or datetime.now(timezone.utc)


def minutes(incident, now: datetime | None = None) -> float:
    """How long it lasted (so far, while open), in minutes."""
    return (until(incident, now) - incident.start).total_seconds() / 60


def duration_text(incident, now: datetime | None = None) -> str:
    """"23 min" / "1 h 05 min"; an open incident's duration so far is followed by "(ongoing)"."""
    total = int(round(minutes(incident, now)))
    text = f"{total // 60} h {total % 60:02d} min" if total >= 60 else f"{total} min"
    return f"{text} (ongoing)" if incident.end is None else text


def cause_text(cause: dict) -> str:
    """{"code": "queue_backlog", "share": 0.81} -> "queue_backlog 81%"."""
    return f"{cause['code']} {fmt(cause.get('share'), '%')}"


def top_cause(incident) -> str:
    """The cause explaining the largest share of the increase, or "" when none was named."""
    return cause_text(incident.causes[0]) if incident.causes else ""


def scope_item(item: dict) -> str:
    """{"dimension": "tenant", "value": "acme", "share": 0.9} -> "tenant=acme 90%"."""
    return f"{item['dimension']}={item['value']} {fmt(item.get('share'), '%')}"


def scope_text(incident) -> str:
    """Where the excess concentrates (its first scope item), or "service-wide" when the scope is empty."""
    return scope_item(incident.scope[0]) if incident.scope else "service-wide"


def peak_metric(incident) -> str | None:
    """The user-facing metric (TTFT or total) whose peak p95 grew most over its baseline p95; None when neither
    is measured on both sides."""
    best, best_ratio = None, None
    for metric in HEADLINE:
        peak, base = _p95(incident.peak, metric), _p95(incident.baseline, metric)
        if peak is None or base is None:
            continue
        growth = peak / base if base > 0 else float("inf")
        if best_ratio is None or growth > best_ratio:
            best, best_ratio = metric, growth
    return best


def peak_text(incident, metric: str | None = None) -> str:
    """"TTFT p95 33 s vs 250 ms ×130": the peak minute's p95 against the baseline's (per-minute median) p95, for
    `metric` (a bucket, ttft or total; default peak_metric()); "not measured" when the peak or baseline is unknown."""
    metric = metric or peak_metric(incident)
    if metric is None:
        return "peak vs baseline not measured"
    peak, base = _p95(incident.peak, metric), _p95(incident.baseline, metric)
    change = ratio(peak, base)
    text = f"{LABELS.get(metric, metric)} p95 {fmt(peak, 'ms')} vs {fmt(base, 'ms')}"
    return f"{text} {change}" if change else text


def grown(incident) -> list[str]:
    """The metrics that departed from the baseline (detection's "departed", most off minutes first), falling back
    to the peak metric; only names of analysis.buckets.ALL."""
    departed = [m for m in (incident.detail or {}).get("departed", []) if m in buckets.ALL]
    if departed:
        return departed
    metric = peak_metric(incident)
    return [metric] if metric else []


def incident_path(incident_id: int, project_name: str) -> str:
    """The dashboard's incident page, relative: /incidents/<id>/?project=<name>."""
    return reverse("incident", args=[incident_id]) + "?" + urlencode({"project": project_name})


def incident_url_of(incident_id: int, project_name: str) -> str:
    """The absolute address of incident `incident_id`'s page (a retired id's redirects), on PUBLIC_BASE_URL."""
    return getattr(settings, "PUBLIC_BASE_URL", "").rstrip("/") + incident_path(incident_id, project_name)


def incident_url(incident, project_name: str | None = None, base: str | None = None) -> str:
    """The incident page's absolute address, on `base` (default PUBLIC_BASE_URL); project_name spares reading
    the incident's project."""
    base = base if base is not None else getattr(settings, "PUBLIC_BASE_URL", "")
    return base.rstrip("/") + incident_path(incident.pk, project_name or incident.project.name)


def _p95(side: dict, metric: str):
    """A metric's p95 in a stored baseline or peak ({"buckets": {...}, "ttft": {...}, "total": {...}})."""
    holder = (side or {}).get("buckets", {}) if metric in buckets.PARTS else (side or {})
    return (holder.get(metric) or {}).get("p95")
