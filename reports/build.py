"""The data of one weekly review: per service with traffic, this ISO week against the one before.

Not covered yet: a per-route breakdown, and stage-level (prep/network/post) shifts.
"""
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from analysis.buckets import PARTS
from analysis.diagnosis import evidence
from analysis.diagnosis.service import cost_per_success
from analysis.evidence_types import LEVELS, Buckets, TenantTail
from analysis.incidents import headlines
from analysis.models import Incident, WindowDiagnosis
from analysis.panels import connections, overview, retries, scheduler, tenants
from analysis.panels.overview import Headline
from analysis.reads import queries
from analysis.scope import Scope
from budgets.models import BudgetViolation
from reports import capacity, slos, weeks

DAY_MS = 86_400_000
TOP_TENANTS = 5
TOP_VIOLATIONS = 10


def _change(now, before):
    """Relative change (0.5 = +50 %); None when either side is unknown or the old value is 0."""
    if now is None or before is None or before == 0:
        return None
    return (now - before) / before


def _percentiles(this: Headline, last: Headline) -> dict:
    return {b: {lvl: {"this": this.buckets[b][lvl], "last": last.buckets[b][lvl],
                      "change": _change(this.buckets[b][lvl], last.buckets[b][lvl])} for lvl in LEVELS}
            for b in ("ttft", "total")}


def _dominance(this: Headline, last: Headline) -> dict:
    """bucket p95 / total p95 per bucket, this week and last: the diagnosis's p95_share (each quantile taken
    separately, so the shares need not sum to 1)."""
    shares = {side: evidence.dominance(Buckets.from_json(head.buckets), {})
              for side, head in (("this", this), ("last", last))}
    return {b: {side: getattr(shares[side], b).p95_share for side in ("this", "last")} for b in PARTS}


def _tenants(rows: list[TenantTail]) -> list[dict]:
    """The TOP_TENANTS worst tenants by TTFT p95 (unknown last)."""
    tails = sorted(rows, key=lambda t: -(t.ttft_p95 if t.ttft_p95 is not None else -1))
    return [{"tenant": t.tenant, "requests": t.count, "ttft_p95": t.ttft_p95, "total_p95": t.total_p95}
            for t in tails[:TOP_TENANTS]]


def _days(scope: Scope) -> list[dict]:
    """Per day with traffic: gap_fraction and connection churn of the service (UTC days: the sweep's
    buckets are epoch-aligned, so a non-UTC week's first and last day are cut at UTC midnight); the rows are the
    Scheduler and Connections pages' (analysis/panels), cut per day."""
    sweep, minutes = defaultdict(list), defaultdict(list)
    for row in scheduler.gaps(scope, DAY_MS).rows:
        sweep[row["bucket_start"].date()].append(row)
    for row in connections.build(scope).minutes:
        minutes[row["minute"].date()].append(row)
    out = []
    for day in sorted(set(sweep) | set(minutes)):
        gap, churn = evidence.gap_fraction(sweep[day]), evidence.churn(minutes[day])
        out.append({"day": day.isoformat(), "gap_fraction": gap.service, "backlog_seconds": gap.backlog_seconds,
                    "new_connections_per_success": churn.new_connections_per_success,
                    "spearman_ttft_p95": churn.spearman_ttft_p95})
    return out


def _violations(project, service, start, end) -> list[dict]:
    rows = (BudgetViolation.objects.filter(budget__project=project, budget__service=service,
                                           start__gte=start, start__lt=end)
            .select_related("budget").order_by("-over_ms")[:TOP_VIOLATIONS])
    return [{"route": v.budget.route, "stage": v.stage, "percentile": v.percentile, "measured_ms": v.measured_ms,
             "target_ms": v.target_ms, "over_ms": v.over_ms, "start": v.start.isoformat()} for v in rows]


def _diagnoses(project, service, start, end) -> dict:
    verdicts = WindowDiagnosis.objects.filter(project=project, service=service, start__gte=start, start__lt=end)
    return dict(Counter(verdicts.values_list("verdict", flat=True)).most_common())


def service_review(project, service: str, start: datetime, end: datetime) -> dict:
    week = Scope(project.pk, service, start, end)
    # the Overview's headline numbers of this week and the one before
    this, last = overview.headline(week), overview.headline(replace(week, start=start - timedelta(days=7), end=start))
    tried = retries.build(week)
    per_hour = evidence.per_hour(tried.successful_runs, (end - start).total_seconds() * 1000)
    return {
        "service": service,
        "requests": {"this": this.requests, "last": last.requests},
        "percentiles": _percentiles(this, last),
        "dominance": _dominance(this, last),
        "violations": _violations(project, service, start, end),
        "tenants": _tenants(tenants.tails(week)),
        "days": _days(week),
        "retries": {k: getattr(tried, k) for k in ("runs", "extra_attempts", "wasted_input_tokens",
                                                    "wasted_output_tokens")},
        "successes_per_hour": per_hour,
        "cost_per_success_usd": cost_per_success(project.pk, service, per_hour),
        "diagnoses": _diagnoses(project, service, start, end),
        "capacity": capacity.week_over_week(week),
    }


def incidents(project, start: datetime, end: datetime, now: datetime | None = None) -> dict:
    """The week's incidents (onset in [start, end)), every service: {"count", "open" (still open), "minutes" (their
    total duration, an open one's up to min(now, end)), "by_verdict" {verdict: count}, most first, "longest":
    {"id", "service", "route", "verdict", "start", "end" (None while open), "minutes", "url"} or None}."""
    cutoff = min(now or datetime.now(timezone.utc), end)
    rows = list(Incident.objects.filter(project=project, start__gte=start, start__lt=end).order_by("start", "id"))
    lengths = {i.pk: max(headlines.minutes(i, cutoff), 0.0) for i in rows}
    longest = max(rows, key=lambda i: lengths[i.pk], default=None)
    return {"count": len(rows), "open": sum(i.end is None for i in rows), "minutes": round(sum(lengths.values()), 1),
            "by_verdict": dict(Counter(i.verdict for i in rows).most_common()),
            "longest": None if longest is None else {
                "id": longest.pk, "service": longest.service, "route": longest.route, "verdict": longest.verdict,
                "start": longest.start.isoformat(), "end": longest.end.isoformat() if longest.end else None,
                "minutes": round(lengths[longest.pk], 1), "url": headlines.incident_url(longest, project.name)}}


def build(project, week: str, tz_name: str = "UTC") -> dict:
    start, end = weeks.bounds(week, tz_name)
    services = sorted({s for p, s in queries.active_services(start, end) if p == project.pk})
    return {"project": project.name, "week": week, "previous_week": weeks.previous(week), "timezone": tz_name,
            "start": start.isoformat(), "end": end.isoformat(), "incidents": incidents(project, start, end),
            "slos": slos.at_end(project, end),
            "services": [service_review(project, s, start, end) for s in services]}
