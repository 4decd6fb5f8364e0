"""Signature statistics computed from emitted OpenTelemetry spans (not from the model's objects).

`capture()` runs a preset through the real Emitter into an in-memory exporter; `records()` turns the
ReadableSpans back into per-attempt records, reading only what a user's telemetry would carry (span
events, llm.* attributes, stage spans, the resource's service.instance.id); the other functions are
the analyses docs/span-convention.md describes. Times are ms on the simulated clock.
"""
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from analysis.stats import spearman  # noqa: F401  (the preset tests use it as sg.spearman)
from simulator.emit import Emitter
from simulator.runner import run_simulation

BASE_NS = 1_767_610_800 * 10**9  # a fixed instant (2026-01-05 11:00 UTC): same input, same spans
MINUTE_MS = 60_000.0
PREPROCESSING = ("tokenize", "prompt_build", "policy")


def capture(scenario, duration_s, seed=1, fmt="native", service="llm-gateway"):
    """The spans a preset emits over duration_s simulated seconds, and the runner's totals."""
    exporter = InMemorySpanExporter()
    emitter = Emitter(exporter, BASE_NS, fmt=fmt, seed=seed)
    totals = run_simulation(emitter, scenario, duration_s, seed, service)
    emitter.close()
    return exporter.get_finished_spans(), totals


@dataclass
class Rec:
    """One attempt span: lifecycle instants (ms, None when the event is absent) and attributes."""

    run_id: str
    attempt: int
    instance: str
    tenant: str
    cap: int
    reused: bool | None
    ok: bool
    cause: str
    input_tokens: int
    output_tokens: int | None
    queued: float
    admitted: float | None
    first_token: float | None
    last_token: float | None
    released: float | None
    end: float
    stages: dict = field(default_factory=dict)  # llm.stage -> summed ms of the attempt's stage spans

    @property
    def t_queue(self):  # admitted missing: admitted_at = queued_at (the convention), so 0
        return (self.admitted if self.admitted is not None else self.queued) - self.queued

    @property
    def t_conn(self):
        return 0.0 if self.reused else self.stages.get("connect", 0.0)

    @property
    def t_first_token(self):
        if self.first_token is None or self.admitted is None:
            return None
        return self.first_token - self.admitted - self.t_conn

    @property
    def ttft(self):
        return None if self.first_token is None else self.first_token - self.queued

    @property
    def t_stream(self):
        return None if self.last_token is None or self.first_token is None else self.last_token - self.first_token

    @property
    def t_post(self):
        return None if self.released is None or self.last_token is None else self.released - self.last_token

    @property
    def total(self):
        return None if self.released is None else self.released - self.queued

    @property
    def slot_end(self):  # released missing: span end
        return self.released if self.released is not None else self.end


def _ms(ns):
    return (ns - BASE_NS) / 1e6


def records(spans):
    """Per-attempt records of native-form spans, with their stage spans joined by parent span id."""
    stages = defaultdict(Counter)
    for s in spans:
        stage = s.attributes.get("llm.stage")
        if stage and s.parent is not None:
            stages[s.parent.span_id][stage] += (s.end_time - s.start_time) / 1e6
    recs = []
    for s in spans:
        if s.name != "llm.request":
            continue
        a, events = s.attributes, {e.name: _ms(e.timestamp) for e in s.events}
        recs.append(Rec(
            run_id=a["llm.run.id"], attempt=a["llm.attempt"], instance=s.resource.attributes["service.instance.id"],
            tenant=a["tenant.id"], cap=a["llm.scheduler.cap"], reused=a.get("llm.connection.reused"),
            ok=not a.get("llm.retry.cause"), cause=a.get("llm.retry.cause", ""),
            input_tokens=a["gen_ai.usage.input_tokens"], output_tokens=a.get("gen_ai.usage.output_tokens"),
            queued=events.get("queued", _ms(s.start_time)), admitted=events.get("admitted"),
            first_token=events.get("first_token"), last_token=events.get("last_token"), released=events.get("released"),
            end=_ms(s.end_time), stages=dict(stages[s.context.span_id]),
        ))
    return recs


# -- plain statistics ------------------------------------------------------------------------

def pct(values, p):
    """The p-th percentile (linear interpolation between closest ranks); None for no values."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values):
    return pct(values, 50)


def stddev(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / max(len(xs) - 1, 1))


# -- scheduler state over time (docs/span-convention.md, "Scheduler state over time") --------------

@dataclass
class Scheduler:
    backlog_ms: float = 0.0  # time with queue_depth > 0, summed over instances
    gap_ms: float = 0.0  # ... and in_flight < cap
    at_cap_ms: float = 0.0  # ... and in_flight == cap
    total_ms: float = 0.0
    tenant_inflight_backlog: Counter = field(default_factory=Counter)  # tenant -> in-flight slot-ms during backlog
    window_queue: Counter = field(default_factory=Counter)  # minute -> queue_depth x ms, summed over instances

    @property
    def gap_fraction(self):
        return self.gap_ms / self.backlog_ms if self.backlog_ms else None

    @property
    def at_cap_fraction(self):
        return self.at_cap_ms / self.backlog_ms if self.backlog_ms else None

    @property
    def backlog_share(self):
        """Share of instance-time with a non-empty queue."""
        return self.backlog_ms / self.total_ms if self.total_ms else 0.0

    def inflight_share(self, tenant):
        total = sum(self.tenant_inflight_backlog.values())
        return self.tenant_inflight_backlog[tenant] / total if total else 0.0


def scheduler(recs):
    """Sweep each instance's instants: queue_depth(t) = #{queued <= t < admitted}, in_flight(t) =
    #{admitted <= t < released}; pooled over instances as docs/span-convention.md's service-level gap_fraction."""
    out = Scheduler()
    by_instance = defaultdict(list)
    for r in recs:
        by_instance[r.instance].append(r)
    for rs in by_instance.values():
        cap = rs[0].cap
        changes = []  # (t, d_queue, d_in_flight, tenant)
        for r in rs:
            admitted = r.admitted if r.admitted is not None else r.queued
            changes += [(r.queued, 1, 0, r.tenant), (admitted, -1, 0, r.tenant)]
            if r.admitted is not None:
                changes += [(r.admitted, 0, 1, r.tenant), (r.slot_end, 0, -1, r.tenant)]
        changes.sort(key=lambda c: c[0])
        queue = in_flight = 0
        tenants = Counter()
        prev = changes[0][0]
        out.total_ms += changes[-1][0] - prev
        for t, dq, di, tenant in changes:
            dt = t - prev
            if dt > 0 and queue > 0:
                out.backlog_ms += dt
                out.gap_ms += dt if in_flight < cap else 0.0
                out.at_cap_ms += dt if in_flight >= cap else 0.0
                for name, n in tenants.items():
                    out.tenant_inflight_backlog[name] += n * dt
                _spread(out.window_queue, prev, t, queue)
            queue, in_flight, prev = queue + dq, in_flight + di, t
            tenants[tenant] += di
    return out


def _spread(acc, t0, t1, depth):
    """Add depth x time of [t0, t1) to the 1-minute windows it covers."""
    while t0 < t1:
        w = int(t0 // MINUTE_MS)
        edge = min(t1, (w + 1) * MINUTE_MS)
        acc[w] += depth * (edge - t0)
        t0 = edge


# -- per-window, per-run and per-tenant views ------------------------------------------------

def windows(recs, min_successes=20):
    """Per 1-minute window (by queued_at, the convention's window rule): new connections per success,
    TTFT p95 and stddev, retried attempts. Windows with too few successes for a p95 are left out."""
    by_w = defaultdict(list)
    for r in recs:
        by_w[int(r.queued // MINUTE_MS)].append(r)
    out = {}
    for w, rs in sorted(by_w.items()):
        ttfts = [r.ttft for r in rs if r.ok]
        if len(ttfts) < min_successes:
            continue
        out[w] = {
            "new_conn_per_success": sum(1 for r in rs if r.reused is False) / len(ttfts),
            "ttft_p95": pct(ttfts, 95), "ttft_sd": stddev(ttfts),
            "retries": sum(1 for r in rs if r.attempt > 1),
        }
    return out


def retry_rate(recs):
    """Mean of (attempts per run - 1) over runs (llm.run.id), and the causes of failed attempts."""
    per_run = Counter(r.run_id for r in recs)
    rate = sum(n - 1 for n in per_run.values()) / len(per_run)
    return rate, Counter(r.cause for r in recs if not r.ok)


def tenant_queue_p95(recs):
    by_t = defaultdict(list)
    for r in recs:
        by_t[r.tenant].append(r.t_queue)
    return {t: pct(v, 95) for t, v in by_t.items()}


def stage_share(recs, names):
    """Median over successful attempts of (those stage spans' time) / t_first_token."""
    shares = [sum(r.stages.get(n, 0.0) for n in names) / r.t_first_token
              for r in recs if r.ok and r.t_first_token and r.t_first_token > 0]
    return median(shares)


def share_of_total(recs, bucket):
    """Median over successful attempts of bucket / (released - queued)."""
    return median([getattr(r, bucket) / r.total for r in recs if r.ok and r.total])


def time_share(recs, bucket):
    """Share of all successful requests' time (released - queued, summed) spent in a bucket."""
    done = [r for r in recs if r.ok and r.total]
    return sum(getattr(r, bucket) for r in done) / sum(r.total for r in done)


def ms_per_output_token(recs):
    return median([r.t_stream / max(r.output_tokens - 1, 1) for r in recs if r.ok and r.output_tokens])
