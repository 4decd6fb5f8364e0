"""The incidents step of the minute pipeline, and the re-detection of one service over a stretch.

Every minute the step queues the minutes of the spans ingested since it last looked (queue.py: one row per
service, kept until judged), then judges what is queued and materialized, oldest first, projects in turns within
its budget (analysis/fairness.py). A unit judges one service from LOOKBACK before its first queued minute up to the
last complete minute (reads: that stretch plus ANALYSIS_BASELINE_HOURS before it, and the same span a day earlier),
at most CHUNK of queued minutes at a time, so a backfill of days is judged in steps that each stay small. A unit
left for lack of time stays queued; nothing depends on the service still sending. Services with an open incident
and nothing queued are judged too, so an incident whose service went silent closes (detection's silence rule).
"""
from datetime import datetime, timedelta

from django.conf import settings

from analysis.diagnosis.thresholds import configured
from analysis.fairness import Deadline, run_in_turns
from analysis.incidents import queue
from analysis.incidents.baseline import DAY, HOUR, UNKNOWN, Chooser
from analysis.incidents.detection import MAX_SLICES, SLICE_LEVEL, Detection, detect, keep_slices
from analysis.incidents.records import reconcile
from analysis.models import DirtyHour, Incident, JudgeWork
from analysis.reads import queries
from analysis.rollups.materialize import store_now
from analysis.scope import Scope

STRETCH = timedelta(hours=2)  # how far a walk that ends inside an open incident follows it per step
# A unit re-judges this much before its first queued minute: a run of off minutes or a young incident that began
# just before it is seen whole (persistence and incident_min_minutes need the minutes before).
LOOKBACK = timedelta(minutes=30)
ALIGN = timedelta(minutes=10)  # stretch starts are rounded down to this, so services share their batched reads
CHUNK = timedelta(hours=6)  # queued minutes judged per unit at most: a backfill of days goes in steps
MAX_STRETCH = DAY  # an open incident older than this is not re-judged from its onset
# TRICKY: an INSERT stamps ingested_at when it starts and its rows appear when it ends: a materialization is taken to
# hold the spans stamped this long before it began (as analysis/rollups/freshness.py does)
OVERLAP = timedelta(seconds=2)
# services whose series one read returns (Series): planning is ~55 ms of a service's ~250 ms read, and a batch
# read ahead for services the step's budget then leaves for the next minute is wasted
BATCH = 8


def detect_service(project_id: int, service: str, start: datetime, end: datetime, now: datetime,
                   series: "Series | None" = None) -> dict:
    """Detect the incidents of one service, and of its slices, with an onset in [start, end) and store them in
    place of those stored there (records.reconcile). A slice (a route, a tenant, an instance; a dimension with two
    values or more) is judged on its own series and baseline, on its per-minute medians (detection.SLICE_LEVEL).
    Its incidents that overlap one of the whole service's, or of a slice kept before it (routes first), are left
    out (detection.beside). A route's are stored as that route's; a tenant's or an instance's as the service's, with
    the slice in detail["slice"] and first in scope. A stored incident still open at `start` (or ending after it) is
    re-judged from its onset. Returns reconcile's counts plus the whole service's "judged" and "no_baseline"
    minutes. `series`: the reads of the minute job's services over [start, end) (Series), taken when the stretch is
    that one."""
    th = configured()
    start = _from_onset(project_id, service, start, end)
    limit = now.replace(second=0, microsecond=0)
    while True:
        found = _walk(project_id, service, start, end, th, series)
        if end >= limit or not any(d.incidents and d.incidents[-1].end is None for d in found.values()):
            break
        end = min(end + STRETCH, limit)  # a re-judged past stretch ends inside an incident: follow it to its end
    service_wide = found.pop(("", ""))
    queue.record_no_baseline(project_id, service, start, end, service_wide.no_baseline_minutes,
                             queue.no_baseline_reason(th))
    whole = service_wide.incidents
    kept = keep_slices(whole, {key: detection.incidents for key, detection in found.items()})
    routes = {value: mine for (dimension, value), mine in kept.items() if dimension == "route"}
    services = sorted(whole + [f for (dimension, _), mine in kept.items() if dimension != "route" for f in mine],
                      key=lambda f: f.start)
    counts = reconcile(project_id, service, "", start, end, services, now, th)
    # routes with incidents stored in the stretch are reconciled too: those no longer found are deleted
    stored = Incident.objects.filter(project_id=project_id, service=service, start__gte=start, start__lt=end)
    for route in sorted(set(routes) | set(stored.exclude(route="").values_list("route", flat=True))):
        _add(counts, reconcile(project_id, service, route, start, end, routes.get(route, []), now, th))
    return {**counts, "judged": service_wide.judged, "no_baseline": service_wide.no_baseline}


class Series:
    """The series a walk reads (every slice's over the stretch and its baseline hours, and over the same hours a day
    earlier) of one project's services over one stretch [start, end), read BATCH services at a time when first asked
    for: the minute job judges the services queued with the same stretch together."""

    def __init__(self, project_id: int, services: list[str], start: datetime, end: datetime, th):
        self.project_id, self.services, self.start, self.end, self.th = project_id, services, start, end, th
        self._read: dict[str, tuple[dict, dict]] = {}

    def of(self, service: str, start: datetime, end: datetime) -> tuple[dict, dict]:
        """(points, previous) of one service: from the batch that holds it when [start, end) is the stretch, else
        read for it alone (an open incident moved the start back, or the walk follows it past the end)."""
        if (start, end) != (self.start, self.end) or service not in self.services:
            return _series(self.project_id, [service], start, end, self.th)[service]
        if service not in self._read:
            at = self.services.index(service) // BATCH * BATCH
            self._read.update(_series(self.project_id, self.services[at:at + BATCH], start, end, self.th))
        return self._read.pop(service)


def _series(project_id, services, start, end, th) -> dict[str, tuple[dict, dict]]:
    """service -> (points, previous) for Series: two reads for all of `services`."""
    hours = settings.ANALYSIS_BASELINE_HOURS
    limits = {"min_attempts": th.incident_min_attempts, "min_minutes": th.incident_baseline_minutes,
              "max_slices": MAX_SLICES}
    today = Scope(project_id, "", start - timedelta(hours=hours), end)
    # the day before, for the slices judged today, busy there or not: the same floor of busy minutes (an hour of
    # the previous day is a baseline only with that many), but not ranked (another day's busiest may differ)
    day_before = Scope(project_id, "", _hour(start) - DAY, _hour(end) + HOUR - DAY)
    points = queries.incident_series_slices_of(today, services, **limits)
    previous = queries.incident_series_slices_of(day_before, services,
                                                 **{**limits, "max_slices": queries.UINT32_MAX})
    _add_layers(points, queries.layer_series_of(today, services))
    _add_layers(previous, queries.layer_series_of(day_before, services))
    return {service: (points[service], previous[service]) for service in services}


def _add_layers(series: dict, layers: dict) -> None:
    """Give each minute of a gateway's whole-service series its t_gateway (queries.layer_series_of): the time its
    server span spends outside its calls is what the user waits for too, and moves none of the call's buckets. Only
    services with calls seen at two layers get it (a single-layer service's series stays as read)."""
    for service, minutes in layers.items():
        for point in series.get(service, {}).get(("", ""), []):
            point["t_gateway"] = minutes.get(point["at"], UNKNOWN)


def _walk(project_id, service, start, end, th, series: Series | None = None) -> dict[tuple[str, str], Detection]:
    """detection.detect over [start, end) of the whole service (("", "")) and of each slice worth judging, on the
    series read around it (module docstring): every slice's series for the stretch and for the day before."""
    hours = settings.ANALYSIS_BASELINE_HOURS
    if series is None:
        points, previous = _series(project_id, [service], start, end, th)[service]
    else:
        points, previous = series.of(service, start, end)
    excluded = _stored_minutes(project_id, service, start)
    out = {}
    for key in points:  # the whole service and the slices worth judging, as the read selects them
        chooser = Chooser(points[key], previous.get(key, []), excluded(key[1] if key[0] == "route" else ""), hours,
                          th.incident_min_attempts, th.incident_baseline_minutes)
        out[key] = detect(points[key], start, end, chooser, th, level=SLICE_LEVEL if key[0] else "p95")
    return out


def _from_onset(project_id, service, start, end) -> datetime:
    onsets = (Incident.objects.filter(project_id=project_id, service=service, start__lt=start,
                                      start__gte=end - MAX_STRETCH)
              .exclude(end__lte=start).values_list("start", flat=True))
    return min([start, *onsets])


def _stored_minutes(project_id, service, start):
    """excluded(route)(at) for a Chooser: whether minute `at` lies in a stored incident with an onset before
    `start` (those from `start` on are being re-judged: the walk leaves out the ones it finds itself) of the whole
    service, or of that route. A route's baseline leaves out the service's incidents too: they slowed every route."""
    since = start - DAY - timedelta(hours=settings.ANALYSIS_BASELINE_HOURS) - HOUR
    spans = list(Incident.objects.filter(project_id=project_id, service=service, start__lt=start,
                                         start__gte=since).values_list("route", "start", "end"))

    def excluded(route: str):
        mine = [(s, e) for r, s, e in spans if r in ("", route)]
        return lambda at: any(s <= at and (e is None or at < e) for s, e in mine)
    return excluded


def _hour(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def judge_queued(now: datetime, deadline: Deadline | None = None, until: datetime | None = None) -> dict:
    """The minute job (see the module docstring): queue what was ingested (queue.queue_work, up to `until`), then
    judge. Returns {"queued": services found with new spans, "services": units judged, "open": services with an open
    incident re-judged, "incidents": {count label: n}, "deferred": services still queued, "errors"}."""
    found = queue.queue_work(now, until)
    limit = now.replace(second=0, microsecond=0)
    th = configured()
    dirty: dict[int, list[datetime]] = {}
    for project_id, hour in DirtyHour.objects.values_list("project_id", "hour"):
        dirty.setdefault(project_id, []).append(hour)
    versions = {project_id: queue.materialized_after(project_id, min(hours), max(hours) + HOUR)
                for project_id, hours in dirty.items()}
    queues: dict[int, list] = {}
    works = list(JudgeWork.objects.order_by("queued_at", "id"))
    for work in works:  # the minute in progress waits for its end; hours not materialized with its spans too
        if work.start < limit and _materialized(work, dirty.get(work.project_id, []), versions.get(work.project_id, {})):
            queues.setdefault(work.project_id, []).append(("work", work, _stretch(work, limit)))
    waiting = {(w.project_id, w.service) for w in works}
    for project_id, service in sorted(set(Incident.objects.filter(end__isnull=True).values_list("project_id", "service"))
                                      - waiting):
        queues.setdefault(project_id, []).append(("open", project_id, service))
    series: dict[tuple, Series] = {}
    for project_id, items in queues.items():
        groups: dict[tuple, list[str]] = {}
        for item in items:
            if item[0] == "work":
                groups.setdefault((project_id, *item[2]), []).append(item[1].service)
        series.update({key: Series(key[0], services, key[1], key[2], th) for key, services in groups.items()})
    totals: dict[str, int] = {}

    def unit(item) -> str:
        if item[0] == "open":  # nothing queued: the silence rule may close it
            _, project_id, service = item
            _add(totals, detect_service(project_id, service, limit - LOOKBACK, limit, now))
            return "open"
        _, work, (start, upto) = item
        try:
            _add(totals, detect_service(work.project_id, work.service, start, upto, now,
                                        series[(work.project_id, start, upto)]))
        except Exception:
            queue.failed(work, now)
            raise  # logged and counted by run_in_turns
        queue.done(work, upto)
        return "service"

    tally = run_in_turns([iter(q) for q in queues.values()], unit, deadline or Deadline(None), "incidents")
    return {"queued": found, "services": tally.outcomes.get("service", 0), "open": tally.outcomes.get("open", 0),
            "incidents": totals, "deferred": JudgeWork.objects.count(), "errors": tally.errors}


def judge_all(now: datetime) -> dict:
    """Queue every span stored so far and judge all of it, with no time budget (tests, benchmarks, a manual run):
    judge_queued as if the materialize step had seen every span, again until a run has nothing left it can judge
    (a backfill's later chunks). Returns the first run's summary, "services" and the counts summed over the runs."""
    out = judge_queued(now, Deadline(None), until=store_now() + timedelta(seconds=1))
    while out["deferred"] and not out["errors"]:
        more = judge_queued(now, Deadline(None))
        if not more["services"]:
            break
        out["services"] += more["services"]
        _add(out["incidents"], more["incidents"])
        out["deferred"], out["errors"] = more["deferred"], more["errors"]
    return out


def _materialized(work: JudgeWork, dirty_hours: list[datetime], versions: dict[datetime, datetime]) -> bool:
    """Whether the hours of the work's stretch are materialized with its spans: none of them waits in the materialize
    queue, or it waits for other services' spans, having been materialized after this service's newest one (a fleet's
    burst keeps its hours queued until its last service is sent; the first services are judged meanwhile)."""
    first = _hour(work.start - LOOKBACK)
    for hour in dirty_hours:
        if first <= hour < work.end:
            at = versions.get(hour)
            if at is None or work.ingested_until is None or at - OVERLAP < work.ingested_until:
                return False
    return True


def _stretch(work: JudgeWork, limit: datetime) -> tuple[datetime, datetime]:
    """[start, end) a unit judges: from LOOKBACK before the first queued minute (rounded down to ALIGN) up to the
    last complete minute, or CHUNK of queued minutes when more are queued (a backfill)."""
    start = work.start - LOOKBACK
    start = start - timedelta(minutes=start.minute % (ALIGN.seconds // 60), seconds=start.second,
                              microseconds=start.microsecond)
    return start, min(limit, work.start + CHUNK)


def _add(totals: dict, counts: dict) -> None:
    for name in ("created", "updated", "closed", "deleted", "merged"):
        totals[name] = totals.get(name, 0) + counts.get(name, 0)
