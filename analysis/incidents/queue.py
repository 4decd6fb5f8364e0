"""What the incidents step has to judge (JudgeWork), and what it has judged of a service (the API's honest answers).

Judging is driven by data, not by recency: every minute, the spans ingested since the step's watermark (up to the
materialize step's, so their hours are queued for materializing first) queue their services' minutes, one row per
project and service, widened while it waits. A row leaves the queue only once its minutes are judged
(analysis/incidents/jobs.py), so a service that stops sending (a batch job, a crashed gateway, a backfill) is judged
all the same, and the step's budget delays work but never drops it.

judgement() tells a caller what is known of a service's window: up to when every minute with traffic is judged
(`judged_until`), how many such minutes are not judged yet (`pending`), and which judged minutes had no baseline.
"""
import difflib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from django.conf import settings
from django.db import transaction

from analysis.errors import AnalysisError
from analysis.models import Incident, JobWatermark, JudgeWork, NoBaselineStretch
from analysis.sql_files import sql as _sql
from analysis.windows import iso, utc_naive
from projects.models import Project
from store import client
from store.reasons import Reason

JUDGE, MATERIALIZE = "judge", "materialize"  # JobWatermark names (MATERIALIZE: analysis/work/backlog.py's)
# TRICKY: an INSERT stamps ingested_at when it starts and its rows appear when it ends. The materialize step reads
# every span stamped up to its mark (and looks 2 minutes back); the judge step stops this far before that mark, so a
# span still being written when the materialize step read is left for the next minute, not judged before its hour
# is queued for materializing.
LAG = timedelta(seconds=30)
FIRST_LOOK = timedelta(days=1)  # a first run (a new install, an upgrade) queues the spans ingested this long before
MINUTE = timedelta(minutes=1)
EPOCH_YEAR = 1970
MAX_SERVICE_LENGTH = JudgeWork._meta.get_field("service").max_length
CHUNK = 1000  # rows read or written at a time


def queue_work(now: datetime, until: datetime | None = None) -> int:
    """Queue the minutes of the spans ingested after the judge watermark and up to `until` (default: the
    materialize step's watermark minus LAG; nothing before that step ever ran), then move the mark there.
    A service already queued gets its stretch widened. Returns how many (project, service) pairs were found."""
    with transaction.atomic():
        mark = JobWatermark.objects.select_for_update().get_or_create(
            name=JUDGE, defaults={"at": now - FIRST_LOOK})[0]
        if until is None:
            materialized = JobWatermark.objects.filter(name=MATERIALIZE).values_list("at", flat=True).first()
            if materialized is None:
                return 0
            until = materialized - LAG
        if until <= mark.at:
            return 0
        rows = client.query_rows(_sql("judge_minutes"), parameters={"since": utc_naive(mark.at),
                                                                       "until": utc_naive(until)})
        found = {(int(p), s): (_aware(first), _aware(end), _aware(at)) for p, s, first, end, at in rows
                 if len(s) <= MAX_SERVICE_LENGTH}
        known = set(Project.objects.filter(pk__in={p for p, _ in found}).values_list("pk", flat=True))
        found = {key: value for key, value in found.items() if key[0] in known}
        _widen(found, now)
        mark.at = until
        mark.save(update_fields=["at"])
    return len(found)


def _widen(found: dict[tuple[int, str], tuple[datetime, datetime, datetime]], now: datetime) -> None:
    """Create the queued rows of `found`, or widen those already queued to cover their new minutes too."""
    keys = list(found)
    for at in range(0, len(keys), CHUNK):
        part = keys[at:at + CHUNK]
        stored = {(w.project_id, w.service): w for w in JudgeWork.objects.select_for_update().filter(
            project_id__in={p for p, _ in part}, service__in={s for _, s in part})}
        new, changed = [], []
        for key in part:
            first, end, ingested = found[key]
            row = stored.get(key)
            if row is None:
                new.append(JudgeWork(project_id=key[0], service=key[1], start=first, end=end, queued_at=now,
                                     ingested_until=ingested))
            else:  # new spans: widened, and judged again once materialized after them
                row.start, row.end, row.version = min(row.start, first), max(row.end, end), row.version + 1
                row.ingested_until = max(row.ingested_until or ingested, ingested)
                changed.append(row)
        JudgeWork.objects.bulk_create(new, batch_size=CHUNK)
        JudgeWork.objects.bulk_update(changed, ["start", "end", "version", "ingested_until"], batch_size=CHUNK)


def materialized_after(project_id: int, start: datetime, end: datetime) -> dict[datetime, datetime]:
    """hour -> when its buckets were last materialized, for the project's hours in [start, end)."""
    rows = client.query_rows(_sql("materialized_versions"), parameters={
        "project_id": project_id, "start": utc_naive(start), "end": utc_naive(end)})
    return {_aware(hour): _aware(at) for hour, at in rows}


def done(work: JudgeWork, upto: datetime) -> None:
    """The minutes of `work` before `upto` are judged: drop them from the queue, unless the row was widened while
    they were being judged (then it stays whole, and is judged again with the new minutes)."""
    rows = JudgeWork.objects.filter(pk=work.pk, version=work.version)
    if upto >= work.end:
        rows.delete()
    else:
        rows.update(start=upto, failures=0)


def failed(work: JudgeWork, now: datetime) -> None:
    """Judging `work` raised: it goes to the back of its project's queue (a failing service must not hold the
    others up) and stays pending, so the answers keep saying so."""
    JudgeWork.objects.filter(pk=work.pk).update(queued_at=now, failures=work.failures + 1)


def record_no_baseline(project_id: int, service: str, start: datetime, end: datetime, minutes: list[datetime],
                       reason: str) -> None:
    """Replace the service's no-baseline stretches in [start, end) with those of `minutes` (judged minutes without a
    baseline, sorted), consecutive minutes as one stretch."""
    stretches: list[list] = []
    for at in minutes:
        if stretches and stretches[-1][1] == at:
            stretches[-1][1], stretches[-1][2] = at + MINUTE, stretches[-1][2] + 1
        else:
            stretches.append([at, at + MINUTE, 1])
    with transaction.atomic():
        NoBaselineStretch.objects.filter(project_id=project_id, service=service, start__gte=start,
                                         start__lt=end).delete()
        NoBaselineStretch.objects.bulk_create([
            NoBaselineStretch(project_id=project_id, service=service, start=s, end=e, minutes=n, reason=reason)
            for s, e, n in stretches])


@dataclass(frozen=True)
class Judgement:
    """What is known of a service's window [start, end): every minute with traffic before `judged_until` is
    judged; `pending` minutes with traffic are not yet (no incident means none only when it is 0);
    `no_baseline` judged minutes had none to compare with."""

    judged_until: datetime
    pending: int
    no_baseline: dict

    def json(self) -> dict:
        return {"judged_until": iso(self.judged_until), "pending": self.pending, "no_baseline": self.no_baseline}


def judgement(project_id: int, service: str, start: datetime, end: datetime,
              now: datetime | None = None) -> Judgement:
    """The Judgement of one service's window. Minutes after `now` (default: the clock) are not judged yet, whether
    traffic comes or not: judged_until stops at now's minute then."""
    now = now or datetime.now(timezone.utc)
    work = JudgeWork.objects.filter(project_id=project_id, service=service).first()
    far = datetime(EPOCH_YEAR + 1, 1, 1, tzinfo=timezone.utc)
    [(minutes, first)] = client.query_rows(_sql("unjudged_minutes"), parameters={
        "project_id": project_id, "service": service, "start": utc_naive(start), "end": utc_naive(end),
        "work_start": utc_naive(work.start if work else far), "work_end": utc_naive(work.end if work else far),
        "since": _judged_mark()})
    limit = min(end, now.replace(second=0, microsecond=0))
    first = _aware(first) if minutes else None
    judged_until = max(start, min(limit, first) if first else limit)
    return Judgement(judged_until, int(minutes), _no_baseline(project_id, service, start, end))


def unjudged_services(project_id: int, start: datetime, end: datetime) -> dict[str, datetime]:
    """service -> the first minute of [start, end) with traffic not judged yet, for the project's services that have
    one (queued, or ingested and not queued yet): what the Incidents page says is not judged."""
    rows = client.query_rows(_sql("unjudged_services"), parameters={
        "project_id": project_id, "start": utc_naive(start), "end": utc_naive(end), "since": _judged_mark()})
    out = {service: _aware(first) for service, first in rows}
    for work in JudgeWork.objects.filter(project_id=project_id, start__lt=end, end__gt=start):
        first = max(work.start, start)
        out[work.service] = min(out.get(work.service, first), first)
    return out


def _judged_mark() -> datetime:
    """The step's watermark as a store parameter: spans ingested after it are not queued yet (epoch: none ever)."""
    mark = JobWatermark.objects.filter(name=JUDGE).values_list("at", flat=True).first()
    return utc_naive(mark or datetime(EPOCH_YEAR, 1, 1, tzinfo=timezone.utc))


def _no_baseline(project_id: int, service: str, start: datetime, end: datetime) -> dict:
    """{"minutes": judged minutes of the window without a baseline, "reason", "stretches": [{"start", "end",
    "minutes"}]}, stretches clipped to the window."""
    rows = list(NoBaselineStretch.objects.filter(project_id=project_id, service=service, start__lt=end,
                                                 end__gt=start).order_by("start"))
    stretches = [{"start": iso(max(r.start, start)), "end": iso(min(r.end, end)),
                  "minutes": int((min(r.end, end) - max(r.start, start)) / MINUTE)} for r in rows]
    return {"minutes": sum(s["minutes"] for s in stretches), "reason": rows[-1].reason if rows else None,
            "stretches": stretches}


def check_known(project_id: int, service: str) -> None:
    """AnalysisError unknown_service (404) when the project has never stored a span of `service` nor an incident of
    it, naming the closest names it has."""
    if client.query_rows(_sql("service_known"), parameters={"project_id": project_id, "service": service}):
        return
    if Incident.objects.filter(project_id=project_id, service=service).exists():
        return
    names = [s for (s,) in client.query_rows(_sql("stored_services"), parameters={"project_id": project_id})]
    close = difflib.get_close_matches(service, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(n) for n in close)}?" if close else ""
    raise AnalysisError(Reason.UNKNOWN_SERVICE, f"no service {service!r} in this project{hint}")


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def no_baseline_reason(th) -> str:
    """Why a judged minute had no baseline, in the thresholds' own numbers."""
    return (f"fewer than {th.incident_baseline_minutes} minutes with {th.incident_min_attempts}+ attempts, outside "
            f"incidents, in the {settings.ANALYSIS_BASELINE_HOURS} h before it or the same hour a day earlier")
