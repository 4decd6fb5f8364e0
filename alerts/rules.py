"""Alert rules: measure each group of a rule over a window, then move its state ok -> pending -> firing -> ok.

Notifications go out only on a state change (and on re-notify), from inside the transaction that records
the change, so running an evaluation twice at the same `now` sends nothing new.
"""
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction

from alerts.delivery import enqueue
from alerts.models import AlertRule, AlertState
from analysis import evidence, queries, stats
from analysis.windows import iso, recent_window, utc_naive
from analysis.models import WindowDiagnosis
from budgets.evaluation import evaluate as evaluate_budget
from store import client

SQL_DIR = Path(__file__).parent / "sql"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def _measure_percentile(rule, start, end) -> dict:
    params = {"project_id": rule.project_id, "service": rule.service, "start": utc_naive(start), "end": utc_naive(end),
              "route": rule.route, "group": rule.group_by, "bucket": rule.bucket, "quantile": rule.percentile / 100}
    rows = client.query((SQL_DIR / "bucket_quantile.sql").read_text(), parameters=params)
    return {r["grp"]: (stats.finite(r["value"]) if r["n"] else None, int(r["requests"])) for r in rows}


def _measure_gap_fraction(rule, start, end) -> dict:
    # the scheduler's queue is the whole service's: one group, whatever group_by says
    args = (rule.project_id, rule.service, start, end)
    requests = queries.bucket_distribution(*args, route=rule.route)["requests"]
    if not requests:
        return {}
    width = stats.series_width_ms((end - start).total_seconds() * 1000)
    state = queries.scheduler_sweep(*args, bucket_ms=width)["instances"]
    return {"": (evidence.gap_fraction(state)["service"], requests)}


def _measure_retry_rate(rule, start, end) -> dict:
    args = (rule.project_id, rule.service, start, end)
    if rule.group_by == "service":
        groups = [("", {"route": rule.route})]
    else:
        rows = queries.bucket_distribution_by_dimension(*args, dimension=rule.group_by, route=rule.route)
        groups = [(r["value"], {"route": rule.route, rule.group_by: r["value"]}) for r in rows]
    out = {}
    for key, where in groups:
        s = queries.retry_summary(*args, **where)
        out[key] = (stats.ratio(s["extra_attempts"], s["runs"]), s["runs"])
    return out


def _measure_tenant_tail(rule, start, end) -> dict:
    # a tenant's tail: always per tenant; bucket is ttft or total
    metric = rule.bucket if rule.bucket in ("ttft", "total") else "total"
    rows = queries.tenant_tails(rule.project_id, rule.service, start, end, route=rule.route)
    return {r["tenant"]: (r[metric]["p95"], r["requests"]) for r in rows}


def latest_diagnosis(rule, start, end) -> WindowDiagnosis | None:
    """The newest stored diagnosis of the service that ends inside (start, end]: the minute job's result."""
    rows = WindowDiagnosis.objects.filter(project_id=rule.project_id, service=rule.service, end__gt=start,
                                          end__lte=end)
    return rows.order_by("-end", "-computed_at").first()


def _measure_verdict(rule, start, end) -> dict:
    row = latest_diagnosis(rule, start, end)
    if row is None:
        return {}
    return {"": (row.verdict, int((row.result.get("evidence") or {}).get("requests") or 0))}


def _measure_budget(rule, start, end) -> dict:
    """{group: (largest over_ms or None, None)}. Budgets are per route, so only group_by route splits them.

    The window's violations are (re)computed here rather than read: the budgets job of the same minute may
    not have run yet, and a missing row would otherwise resolve a firing alert. The evaluation is idempotent
    (it replaces the window's rows with what the job would store); rule.min_requests then filters them."""
    budgets = [rule.budget] if rule.budget_id else list(rule.project.budgets.filter(service=rule.service))
    overs: dict[str, list[float]] = {}
    for budget in budgets:
        if rule.route and budget.route != rule.route:
            continue
        key = budget.route if rule.group_by == "route" else ""
        overs.setdefault(key, []).extend(v.over_ms for v in evaluate_budget(budget, start, end)
                                         if v.requests >= rule.min_requests)
    return {key: (max(values, default=None), None) for key, values in overs.items()}


MEASURES = {AlertRule.PERCENTILE: _measure_percentile, AlertRule.GAP_FRACTION: _measure_gap_fraction,
            AlertRule.RETRY_RATE: _measure_retry_rate, AlertRule.TENANT_TAIL: _measure_tenant_tail,
            AlertRule.VERDICT: _measure_verdict, AlertRule.BUDGET_VIOLATION: _measure_budget}
# kinds whose breach is not a number over rule.threshold
NO_THRESHOLD = (AlertRule.VERDICT, AlertRule.BUDGET_VIOLATION)


def breached(rule, value) -> bool:
    if value is None:
        return False
    if rule.kind == AlertRule.VERDICT:
        return value != "healthy"
    if rule.kind == AlertRule.BUDGET_VIOLATION:
        return True  # any violation of the window is the breach
    return value > rule.threshold


def measure(rule, start, end) -> dict[str, tuple]:
    """{group_key: (value, requests)}; requests None when the kind has no count of its own (budgets)."""
    return MEASURES[rule.kind](rule, start, end)


def _group_label(rule, key) -> str:
    return f"{rule.service} {rule.group_by}={key}" if key else rule.service


def diagnosis_url(rule, key, start, end) -> str:
    """The dashboard's Diagnosis page for this window (and the group's route or tenant)."""
    params = {"project": rule.project.name, "service": rule.service, "route": rule.route}
    if key and rule.group_by in ("route", "tenant"):
        params[rule.group_by] = key
    params.update(start=iso(start), end=iso(end))
    base = getattr(settings, "PUBLIC_BASE_URL", DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/diagnosis/?" + urlencode({k: v for k, v in params.items() if v}, safe=":")


def summary(rule, key, event, value, requests, start, end) -> dict:
    tag = "FIRING" if event == "alert.firing" else "RESOLVED"
    if rule.kind == AlertRule.VERDICT:
        verdict = value
    else:
        row = latest_diagnosis(rule, start, end)
        verdict = row.verdict if row else ""
    measured = {AlertRule.PERCENTILE: f"p{rule.percentile} {rule.bucket} (ms)", AlertRule.GAP_FRACTION: "gap_fraction",
                AlertRule.RETRY_RATE: "extra attempts per run", AlertRule.TENANT_TAIL: f"p95 {rule.bucket} (ms)",
                AlertRule.VERDICT: "verdict", AlertRule.BUDGET_VIOLATION: "largest overspend (ms)"}[rule.kind]
    numbers = {"value": round(value, 3) if isinstance(value, float) else value,
               "threshold": None if rule.kind in NO_THRESHOLD else rule.threshold, "requests": requests}
    return {
        "title": f"[{tag}] {rule.name} {_group_label(rule, key)}",
        "verdict": verdict,
        "numbers": {k: v for k, v in numbers.items() if v is not None},  # Slack shows every field
        "url": diagnosis_url(rule, key, start, end),
        "context": f"{rule.get_kind_display()}: {measured} over {iso(start)} – {iso(end)}",
    }


def _notify(rule, key, event, value, requests, start, end) -> None:
    payload = summary(rule, key, event, value, requests, start, end)
    for webhook in rule.webhooks.filter(enabled=True):
        enqueue(webhook, event, payload)


def _advance(rule, state, is_breached, now) -> str | None:
    """Apply one evaluation to `state` (saved by the caller); returns the event to send, if any."""
    if state.state == AlertState.OK:
        if not is_breached:
            return None
        state.state, state.since = AlertState.PENDING, now  # for_seconds 0 falls through to firing
    if state.state == AlertState.PENDING:
        if not is_breached:
            state.state, state.since = AlertState.OK, now  # never fired: nothing to resolve
            return None
        if now - state.since < timedelta(seconds=rule.for_seconds):
            return None
        state.state, state.since, state.last_notified_at = AlertState.FIRING, now, now
        return "alert.firing"
    # firing
    if not is_breached:
        state.state, state.since, state.last_notified_at = AlertState.OK, now, now
        return "alert.resolved"
    if rule.renotify_seconds and now - state.last_notified_at >= timedelta(seconds=rule.renotify_seconds):
        state.last_notified_at = now
        return "alert.firing"
    return None


def evaluate_rule(rule: AlertRule, start: datetime, end: datetime, now: datetime) -> dict[str, str]:
    """Evaluate `rule` over [start, end) at `now`; returns {group_key: state} of the groups evaluated.
    Groups under min_requests keep their state."""
    results = {}
    for key, (value, requests) in measure(rule, start, end).items():
        if requests is not None and requests < rule.min_requests:
            continue
        AlertState.objects.get_or_create(rule=rule, group_key=key)
        with transaction.atomic():  # the row lock makes concurrent evaluations take turns
            state = AlertState.objects.select_for_update().get(rule=rule, group_key=key)
            event = _advance(rule, state, breached(rule, value), now)
            state.last_value, state.last_evaluated_at = value, now
            state.save()
            if event:
                _notify(rule, key, event, value, requests, start, end)
        results[key] = state.state
    return results


def evaluate_all(now: datetime) -> dict:
    """Every enabled rule over the recent window; returns {"rules", "firing"}."""
    start, end = recent_window(now)
    rules = AlertRule.objects.filter(enabled=True).select_related("project", "budget")
    firing = 0
    for rule in rules:
        firing += sum(s == AlertState.FIRING for s in evaluate_rule(rule, start, end, now).values())
    return {"rules": len(rules), "firing": firing}
