"""Alert kinds: one class per AlertRule.kind, registered in KINDS by that kind's value.

A kind says how a rule is measured over a window, per group ({group key: (value, requests)}; key "" is the
whole service), when a measured value is a breach, and what the message of a state change says. The state
machine (alerts/states.py) and the evaluation (alerts/rules.py) know no kind by name.

Adding a kind touches this module only (a subclass and its entry in KINDS), plus its choice in AlertRule.KINDS
(with the migration of that choice, and AlertRule.clean() if the kind restricts the rule's fields).
"""
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Q
from django.urls import reverse

from alerts.models import AlertRule, AlertState
from analysis import stats
from analysis.diagnosis.verdicts import REGISTRY
from analysis.incidents import headlines
from analysis.models import Incident, RetiredIncident, WindowDiagnosis
from analysis.panels import overview, retries, scheduler, tenants
from analysis.panels import slos as slo_numbers
from analysis.reads import slos as slo_status
from analysis.scope import Scope
from analysis.windows import iso
from analysis.wording import fmt
from budgets import evaluation as budget_evaluation
from budgets.models import BudgetViolation
from slos.models import Slo

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
Groups = dict[str, tuple]  # {group key: (value or None when not measured, requests or None)}


def latest_diagnosis(rule: AlertRule, start: datetime, end: datetime) -> WindowDiagnosis | None:
    """The newest stored diagnosis of the service that ends inside (start, end]: the minute job's result."""
    rows = WindowDiagnosis.objects.filter(project_id=rule.project_id, service=rule.service, end__gt=start,
                                          end__lte=end)
    return rows.order_by("-end", "-computed_at").first()


def diagnosis_url(rule: AlertRule, key: str, start: datetime, end: datetime) -> str:
    """The dashboard's Diagnosis page for this window (and the group's route or tenant)."""
    params = {"project": rule.project.name, "service": rule.service, "route": rule.route}
    if key and rule.group_by in ("route", "tenant"):
        params[rule.group_by] = key
    params.update(start=iso(start), end=iso(end))
    base = getattr(settings, "PUBLIC_BASE_URL", DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/diagnosis/?" + urlencode({k: v for k, v in params.items() if v}, safe=":")


class Kind:
    """How rules of one kind are measured and judged, and what their messages say."""

    threshold = True  # the breach is a value over rule.threshold, and messages show the threshold

    def hold_seconds(self, rule: AlertRule) -> int:
        """How long a group stays breached (pending) before it fires."""
        return rule.for_seconds
    unit = "ms"  # what value and threshold are in (analysis.wording.fmt): Slack shows "25.7 s", JSON keeps numbers

    def measure(self, rule: AlertRule, start: datetime, end: datetime) -> Groups:
        """{group key: (value, requests)} over [start, end); a group under rule.min_requests keeps its state."""
        raise NotImplementedError

    def label(self, rule: AlertRule) -> str:
        """What the message calls the measured value."""
        raise NotImplementedError

    def breached(self, rule: AlertRule, value) -> bool:
        """Whether a measured value is a breach; not measured (None) never is."""
        return value is not None and self.over(rule, value)

    def over(self, rule: AlertRule, value) -> bool:
        return value > rule.threshold

    def verdict(self, rule: AlertRule, value, start: datetime, end: datetime) -> str:
        """The verdict a message shows: the latest stored diagnosis of the window, "" when there is none."""
        row = latest_diagnosis(rule, start, end)
        return row.verdict if row else ""

    def summary(self, rule: AlertRule, key: str, event: str, *, value, requests, start, end) -> dict:
        """The message of a state change (event alert.firing or alert.resolved), as alerts/payloads.py renders it."""
        tag = "FIRING" if event == "alert.firing" else "RESOLVED"
        group = f"{rule.service} {rule.group_by}={key}" if key else rule.service
        numbers = {"value": round(value, 3) if isinstance(value, float) else value,
                   "threshold": rule.threshold if self.threshold else None, "requests": requests}
        return {
            "title": f"[{tag}] {rule.name} {group}",
            "verdict": self.verdict(rule, value, start, end),
            "numbers": {k: v for k, v in numbers.items() if v is not None},  # Slack shows every field
            "unit": self.unit,
            "url": diagnosis_url(rule, key, start, end),
            "context": f"{rule.get_kind_display()}: {self.label(rule)} over {iso(start)} – {iso(end)}",
        }


class Percentile(Kind):
    """p50/p90/p95/p99 of one bucket (or ttft, total), per service, route or tenant."""

    def measure(self, rule, start, end):
        scope = Scope(rule.project_id, rule.service, start, end, route=rule.route)
        # the Overview's percentile of the bucket (analysis/panels/overview.py), per route or tenant
        found = overview.quantile(scope, rule.bucket, rule.percentile, by=rule.group_by)
        return {key: (q.value_ms, q.requests) for key, q in found.items()}

    def label(self, rule):
        return f"p{rule.percentile} {rule.bucket} (ms)"


class GapFraction(Kind):
    """Slots idle under backlog: the scheduler's queue is the whole service's, so one group whatever group_by."""

    def measure(self, rule, start, end):
        service = Scope(rule.project_id, rule.service, start, end)
        # the Overview's request count and the Scheduler page's gap_fraction (analysis/panels)
        requests = overview.headline(replace(service, route=rule.route)).requests
        if not requests:
            return {}
        width = stats.series_width_ms((end - start).total_seconds() * 1000)
        return {"": (scheduler.gaps(service, width).fraction.service, requests)}

    unit = "%"

    def label(self, rule):
        return "gap_fraction"


class RetryRate(Kind):
    """Extra attempts per run; requests counts runs."""

    def measure(self, rule, start, end):
        # the retry numbers of the weekly review (analysis/panels/retries.py), per route or tenant
        groups = retries.per_group(Scope(rule.project_id, rule.service, start, end, route=rule.route), rule.group_by)
        return {key: (r.extra_per_run, r.runs) for key, r in groups.items()}

    unit = "per run"

    def label(self, rule):
        return "extra attempts per run"


class TenantTail(Kind):
    """A tenant's p95 TTFT or total: always per tenant."""

    def measure(self, rule, start, end):
        metric = rule.bucket if rule.bucket in ("ttft", "total") else "total"
        # the Tenants page's tails, every tenant's, without its noisy-neighbour sweep (analysis/panels/tenants.py)
        rows = tenants.tails(Scope(rule.project_id, rule.service, start, end, route=rule.route))
        return {t.tenant: (getattr(t, f"{metric}_p95"), t.count) for t in rows}

    def label(self, rule):
        return f"p95 {rule.bucket} (ms)"


class Verdict(Kind):
    """The stored diagnosis (the minute pipeline's) is anything but healthy or insufficient_data; no diagnosis keeps
    the state."""

    threshold = False
    unit = ""  # the value is a verdict code

    def measure(self, rule, start, end):
        row = latest_diagnosis(rule, start, end)
        if row is None:
            return {}
        return {"": (row.verdict, int((row.result.get("evidence") or {}).get("requests") or 0))}

    def over(self, rule, value):
        # the verdicts that name no cause (analysis.diagnosis.verdicts): healthy, and insufficient_data, which says the
        # spans cannot tell, not that latency is bad: no alert (the pages say what to send). A code no longer
        # registered still names something other than healthy.
        return value not in REGISTRY or REGISTRY[value].is_cause

    def label(self, rule):
        return "verdict"

    def verdict(self, rule, value, start, end):
        return value


class BudgetOverspend(Kind):
    """Any stored violation of the rule's budget (blank: of every budget of the service) in the window."""

    threshold = False

    def measure(self, rule, start, end):
        """{group: (largest over_ms or None, None)}; budgets are per route, so only group_by route splits them.

        Reads the violations the budgets step of the minute pipeline stored for exactly this window. A group with
        a budget that step has not evaluated over the window yet (also one it had no time for) is left out: it
        keeps its state, since a missing row would otherwise resolve a firing alert. Stored rows have at least
        budgets' MIN_REQUESTS; rule.min_requests filters more."""
        budgets = [rule.budget] if rule.budget_id else rule.project.budgets.filter(service=rule.service)
        keys = {b.id: (b.route if rule.group_by == "route" else "") for b in budgets
                if not rule.route or b.route == rule.route}
        unjudged = {keys[b] for b in budget_evaluation.not_evaluated(list(keys), end)}
        keys = {budget_id: key for budget_id, key in keys.items() if key not in unjudged}
        overs: dict[str, list[float]] = {key: [] for key in keys.values()}
        rows = BudgetViolation.objects.filter(budget_id__in=keys, start=start, end=end,
                                              requests__gte=rule.min_requests)
        for budget_id, over_ms in rows.values_list("budget_id", "over_ms"):
            overs[keys[budget_id]].append(over_ms)
        return {key: (max(values, default=None), None) for key, values in overs.items()}

    def over(self, rule, value):
        return True  # any violation of the window is the breach

    def label(self, rule):
        return "largest overspend (ms)"


class IncidentKind(Kind):
    """Stored incidents of the service (analysis/incidents/): one group per incident (key: its id), firing once
    when it opened and resolving once when it ended. rule.min_duration_minutes: an open incident fires once it has
    lasted that long, and one that ended shorter never notifies; rule.verdicts: only those (blank: any). An
    incident found only after it ended (late spans) still sends both, a minute apart. The hold is the minimum
    duration, not for_seconds."""

    threshold = False

    def hold_seconds(self, rule):
        return 0

    def measure(self, rule, start, end):
        """{incident id: ({"id", "verdict", "open", "minutes", "notified"}, None)} for the open incidents, those that
        ended in the window, and those this rule has fired for (a deleted one: value None, which resolves it)."""
        states = {s.group_key: s for s in AlertState.objects.filter(rule=rule)}
        firing = {k for k, s in states.items() if s.state == AlertState.FIRING and k.isdigit()}
        rows = Incident.objects.filter(project_id=rule.project_id, service=rule.service, start__lt=end).filter(
            Q(end__isnull=True) | Q(end__gte=start) | Q(pk__in=[int(k) for k in firing]))
        if rule.route:
            rows = rows.filter(route__in=("", rule.route))
        wanted, out = rule.verdict_list(), {}
        for row in rows.order_by("start", "id"):
            key = str(row.pk)
            if wanted and row.verdict not in wanted and key not in firing:  # a firing one is followed to its end
                continue
            state = states.get(key)
            out[key] = ({"id": row.pk, "verdict": row.verdict, "open": row.end is None,
                         "minutes": round(headlines.minutes(row, end), 2),
                         "notified": bool(state and state.last_notified_at)}, None)
        out.update({key: (None, None) for key in firing if key not in out})
        return out

    def breached(self, rule, value):
        """Open and lasting: breached; ended: breached only if it lasted long enough and was never announced (so
        it fires now and resolves at the next evaluation); deleted by re-detection: not breached."""
        if value is None or value["minutes"] < rule.min_duration_minutes:
            return False
        return value["open"] or not value["notified"]

    def label(self, rule):
        return "incident"

    def summary(self, rule, key, event, *, value, requests, start, end):
        incident = Incident.objects.filter(pk=int(key)).select_related("project").first() if key.isdigit() else None
        if incident is None:
            retired = RetiredIncident.objects.filter(pk=int(key)).first() if key.isdigit() else None
            if retired is not None and retired.merged_into is not None:  # its link redirects to the survivor
                return {"title": f"[RESOLVED] {rule.name} {rule.service}: incident {key} merged into incident "
                                 f"{retired.merged_into}", "verdict": retired.verdict, "numbers": {},
                        "url": headlines.incident_url_of(retired.merged_into, rule.project.name), "context":
                        retired.message}
            return {"title": f"[RESOLVED] {rule.name} {rule.service}: incident {key} no longer detected",
                    "verdict": "", "numbers": {}, "url": "",
                    "context": retired.message if retired else "re-detection on late spans removed it"}
        opened = event == "alert.firing"
        state = "OPEN" if opened else "RESOLVED"
        return {
            "title": f"[INCIDENT {state}] {rule.name} {rule.service}{f' {incident.route}' if incident.route else ''}",
            "verdict": incident.verdict,
            "numbers": {"top cause": headlines.top_cause(incident) or "none named",
                        "scope": headlines.scope_text(incident), "peak vs baseline": headlines.peak_text(incident),
                        "started": iso(incident.start), "duration": headlines.duration_text(incident, end)},
            "url": headlines.incident_url(incident),
            "button": "Open incident",
            "context": f"Incident {incident.pk}: latency off its baseline "
                       f"{'since' if opened else 'from'} {iso(incident.start)}"
                       f"{'' if incident.end is None else f' to {iso(incident.end)}'}",
        }


class SloBurn(Kind):
    """An SLO's error budget burning too fast: analysis.reads.slos.PAGES, the SRE workbook's multiwindow alerts (1 h and
    5 min both at 14.4x or more, or 6 h and 30 min both at 6x or more). One group per SLO (key: its id): the rule's
    SLO, or every SLO of the service (on the rule's route when it names one). requests: the measured requests of the
    last hour. The hold is the short window (it must burn too), not for_seconds; a deleted SLO that fired resolves."""

    threshold = False
    unit = "x"

    def hold_seconds(self, rule):
        return 0

    def measure(self, rule, start, end):
        """{SLO id: ({"5m", "30m", "1h", "6h": burn rate or None, "paging": [fast, slow]}, measured in the last hour)}
        over the burn windows ending at `end`; a deleted SLO still firing: (None, None)."""
        rows = [rule.slo] if rule.slo_id else list(Slo.objects.filter(project_id=rule.project_id, service=rule.service))
        out = {}
        for slo in rows:
            if not rule.route or slo.route == rule.route:
                burn = slo_numbers.burn(slo, end)  # the SLOs page's burn rates (analysis/panels/slos.py)
                out[str(slo.pk)] = (burn.value(), burn.measured["1h"])
        firing = AlertState.objects.filter(rule=rule, state=AlertState.FIRING).exclude(group_key__in=list(out))
        out.update({key: (None, None) for key in firing.values_list("group_key", flat=True)})
        return out

    def breached(self, rule, value):
        return bool(value and value["paging"])

    def label(self, rule):
        return "burn rate"

    def summary(self, rule, key, event, *, value, requests, start, end):
        slo = Slo.objects.filter(pk=int(key)).first() if key.isdigit() else None
        if slo is None:
            return {"title": f"[RESOLVED] {rule.name} {rule.service}: SLO {key} deleted", "verdict": "", "numbers": {},
                    "url": "", "context": "the SLO was deleted while its budget was burning"}
        tag = "FIRING" if event == "alert.firing" else "RESOLVED"
        now = slo_numbers.at(slo, end).status  # once per state change: the budget left is worth a 30-day read
        rates = value or {}
        pages = [p for p in slo_status.PAGES if p.name in rates.get("paging", [])]
        held = "; ".join(f"{p.long} and {p.short} at {fmt(p.factor, 'x')} or more" for p in pages)
        return {
            "title": f"[{tag}] {rule.name}: {slo.description}",
            "verdict": "",
            "numbers": {**{f"burn {w}": fmt(rates.get(w), "x") for w in slo_status.BURN_WINDOWS},
                        "budget remaining": fmt(now.budget_remaining, "%"), "compliance": fmt(now.compliance, "nines"),
                        "requests (1 h)": requests},
            "url": slo_url(rule),
            "button": "Open SLOs",
            "context": f"Error budget burning: {held} ({iso(end)})" if pages else "Burn rates back under " + ", ".join(
                f"{fmt(p.factor, 'x')} over {p.long} or {p.short}" for p in slo_status.PAGES) + f" at {iso(end)}",
        }


def slo_url(rule: AlertRule) -> str:
    """The dashboard's SLO page of the rule's project, on PUBLIC_BASE_URL."""
    base = getattr(settings, "PUBLIC_BASE_URL", DEFAULT_BASE_URL).rstrip("/")
    return f"{base}{reverse('slos')}?" + urlencode({"project": rule.project.name})


KINDS: dict[str, Kind] = {
    AlertRule.BUDGET_VIOLATION: BudgetOverspend(), AlertRule.PERCENTILE: Percentile(),
    AlertRule.GAP_FRACTION: GapFraction(), AlertRule.RETRY_RATE: RetryRate(), AlertRule.TENANT_TAIL: TenantTail(),
    AlertRule.VERDICT: Verdict(), AlertRule.INCIDENT: IncidentKind(), AlertRule.SLO_BURN: SloBurn(),
}
