"""build(): the capacity worksheet of one service window, the one place each of its numbers is computed (the API, the
Capacity page and its CSV, `manage.py capacity` and the weekly review all call it)."""
from collections import Counter, defaultdict
from datetime import datetime

from django.conf import settings

from analysis.capacity import reads
from analysis.capacity.load import curve
from analysis.capacity.objectives import objective
from analysis.capacity.reasons import explained
from analysis.capacity.types import Capacity, Scope, Tokens
from analysis.errors import AnalysisError
from analysis.windows import check_window
from store.concurrent import gather
from store.reasons import Reason

BINS = 20  # load levels from 0 to the largest load seen
SCHEDULER_SHARE = 0.5  # in flight is the scheduler's when at least this share of attempts has an admission instant
GPU_SOURCES = {"dcgm": "DCGM gpu label", "resource": "gpu.count resource attribute", "assumed": "assumed 1"}


def document(project_id: int, service: str, start: datetime, end: datetime, route: str = "") -> dict:
    """checked()'s worksheet as JSON: the /api/v1/capacity document."""
    return checked(project_id, service, start, end, route).to_json()


def checked(project_id: int, service: str, start: datetime, end: datetime, route: str = "") -> Capacity:
    """build() for the API and the command. Raises AnalysisError: missing_parameter without a service, bad_date /
    window_too_large for the window, unknown_service (404) when no run of the service (and route) began in it."""
    if not service:
        raise AnalysisError(Reason.MISSING_PARAMETER, "'service' is required")
    check_window(start, end)
    sheet = build(project_id, service, start, end, route=route)
    if not sheet.worksheet.runs:
        raise AnalysisError(Reason.UNKNOWN_SERVICE, f"no requests of service {service!r} in this window")
    return sheet


def build(project_id: int, service: str, start: datetime, end: datetime, route: str = "") -> Capacity:
    """The capacity worksheet of `service` (one `route`, or all) over [start, end): peak and mean requests per second,
    tokens in and out, batching factor, instances, GPU-hours and cost per 1,000 requests for the service and per
    region, and latency against load with the knee and the headroom at peak. Requests are runs (Capacity's
    UNIT). An empty window gives a worksheet of zeros and Nones with reasons, never an error."""
    labels, active = gather(lambda: reads.instance_labels(project_id, service, start, end),
                            lambda: reads.activity(project_id, service, start, end))
    counted, minutes = gather(lambda: reads.counts(project_id, service, start, end, labels, route),
                              lambda: reads.rates(project_id, service, start, end, labels, route))
    measure = _measure(counted["service"], active)
    levels, fleet = reads.load_levels(project_id, service, start, end, measure, BINS, route)
    served = set(counted["instances"]) if route else set(active) | set(counted["instances"])
    gpus = {i: _gpus(labels.get(i)) for i in served}
    batching = _batching_source(counted["service"], active)
    price = settings.GPU_HOUR_PRICE_USD
    scope = _Scoper(minutes, active, gpus, batching, price)
    regions = sorted({labels[i].region if i in labels else "" for i in served})
    sheet = Capacity(
        service, route, start, end, worksheet=scope.of(None, counted["service"], served),
        regions=[scope.of(r, counted["regions"].get(r), {i for i in served if _region(labels, i) == r})
                 for r in regions] if regions != [""] else [],
        gpus=_gpu_summary(gpus), batching_source=batching, gpu_hour_price_usd=price,
        latency_vs_load=curve(measure, levels, fleet, objective(project_id, service, route),
                              cap=counted["service"].cap if measure == "in_flight" else None))
    return explained(sheet, route)


def _region(labels: dict, instance: str) -> str:
    return labels[instance].region if instance in labels else ""


def _measure(service: reads.Counts, active: dict) -> str:
    """The load measure: the scheduler's in flight when the attempts carry admission instants, else the engine's
    running gauge when it was sent, else requests per second per instance."""
    if service.attempts and service.admitted >= SCHEDULER_SHARE * service.attempts:
        return "in_flight"
    return "running" if any(a.running_samples for a in active.values()) else "rps"


def _batching_source(service: reads.Counts, active: dict) -> str | None:
    if service.attempts and service.admitted >= SCHEDULER_SHARE * service.attempts:
        return "scheduler"
    return "engine running gauge" if any(a.running_busy for a in active.values()) else None


def _gpus(label: reads.Labels | None) -> tuple[int, str]:
    """(GPUs of one instance, where the count comes from): its DCGM series' gpu labels, its gpu.count, else 1."""
    if label is not None and label.dcgm_gpus > 0:
        return label.dcgm_gpus, "dcgm"
    if label is not None and label.gpu_count > 0:
        return label.gpu_count, "resource"
    return 1, "assumed"


def _gpu_summary(gpus: dict) -> dict:
    counts = [n for n, _ in gpus.values()]
    return {"per_instance": {"min": min(counts, default=None), "max": max(counts, default=None)},
            "sources": {GPU_SOURCES[s]: n for s, n in sorted(Counter(s for _, s in gpus.values()).items())}}


class _Scoper:
    """Builds the Scope of the service or of a region from the window's reads."""

    def __init__(self, minutes: list, active: dict, gpus: dict, batching: str | None, price: float | None):
        self.active, self.gpus, self.batching, self.price = active, gpus, batching, price
        self.per_minute = defaultdict(Counter)  # region (None: all) -> minute -> runs
        for m in minutes:
            self.per_minute[None][m.minute] += m.runs
            self.per_minute[m.region][m.minute] += m.runs

    def of(self, region: str | None, counts: reads.Counts | None, instances: set) -> Scope:
        counts = counts or reads.NO_COUNTS
        runs = self.per_minute[region]
        peak_at = max(runs, key=lambda m: (runs[m], -m.timestamp()), default=None)
        hours = sum(self.active[i].active_seconds * self.gpus[i][0] for i in instances if i in self.active) / 3600
        cost = (self.price * hours / counts.runs * 1000
                if self.price is not None and counts.runs and hours else None)
        return Scope(region, counts.runs, counts.attempts, peak_rps=runs[peak_at] / 60 if peak_at else None,
                     peak_at=peak_at, mean_rps=_mean_rps(counts), tokens_in=Tokens(*counts.tokens_in),
                     tokens_out=Tokens(*counts.tokens_out), batching_factor=self._batching(instances),
                     instances=len(instances), gpu_hours=hours if instances else None, cost_per_1k_requests_usd=cost)

    def _batching(self, instances: set) -> float | None:
        rows = [self.active[i] for i in instances if i in self.active]
        if self.batching == "scheduler":
            busy = sum(a.busy_ms for a in rows)
            return sum(a.busy_in_flight_ms for a in rows) / busy if busy else None
        if self.batching == "engine running gauge":
            busy = sum(a.running_busy for a in rows)
            return sum(a.running_sum for a in rows) / busy if busy else None
        return None


def _mean_rps(counts: reads.Counts) -> float | None:
    """Runs per second from the first run's start to the last's: (runs - 1) / that time, so a window reaching past
    the traffic (into the future, or before it began) does not dilute it. None with fewer than two runs."""
    if counts.runs < 2 or counts.last_run_at is None or counts.last_run_at <= counts.first_run_at:
        return None
    return (counts.runs - 1) / (counts.last_run_at - counts.first_run_at).total_seconds()
