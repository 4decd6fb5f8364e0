"""Requests with known signals for SLO tests, and the counts they must give, worked out from what is sent.

Each Sent is one attempt: fast (TTFT 320 ms, total 1,235 ms), slow (TTFT 1,520 ms, total 2,435 ms), failed (status
error, fast timings) or unstreamed (an OTel GenAI client span without time_to_first_chunk: TTFT not measured, total
its duration).
"""
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from analysis.reads.slo_counts import Counts
from tests import factories as f

FAST = {"t_queue_ms": 20.0, "t_first_token_ms": 300.0, "t_stream_ms": 900.0, "t_post_ms": 15.0}
SLOW = {**FAST, "t_first_token_ms": 1500.0}
UNSTREAMED_MS = 1800.0
KINDS = ("fast", "slow", "failed", "unstreamed")


@dataclass(frozen=True)
class Sent:
    at: datetime
    kind: str
    route: str = "/v1/chat"
    tenant: str = "acme"

    @property
    def failed(self) -> bool:
        return self.kind == "failed"

    def value(self, signal: str) -> float | None:
        """The signal in ms as the buckets define it: TTFT = t_queue + t_first_token (reused connection), total =
        TTFT + t_stream + t_post; a GenAI span without time_to_first_chunk has no TTFT."""
        if self.kind == "unstreamed":
            return None if signal == "ttft" else UNSTREAMED_MS
        timings = SLOW if self.kind == "slow" else FAST
        ttft = timings["t_queue_ms"] + timings["t_first_token_ms"]
        return ttft if signal == "ttft" else ttft + timings["t_stream_ms"] + timings["t_post_ms"]

    def span(self) -> Span:
        start_ns = int(self.at.timestamp()) * 1_000_000_000 + self.at.microsecond * 1000
        if self.kind == "unstreamed":
            attrs = {"tenant.id": self.tenant, "llm.route": self.route, "gen_ai.request.model": "llama-3.1-8b",
                     "gen_ai.operation.name": "chat", "gen_ai.system": "openai"}
            return f.span(name="chat llama-3.1-8b", start_ns=start_ns, duration_ms=UNSTREAMED_MS,
                          kind=Span.SPAN_KIND_CLIENT, attributes=attrs)
        status = Status.STATUS_CODE_ERROR if self.failed else Status.STATUS_CODE_UNSET
        return f.attempt(**(SLOW if self.kind == "slow" else FAST), tenant=self.tenant, route=self.route,
                         start_ns=start_ns, status_code=status)


def truth(sent: list[Sent], signal: str, threshold_ms: float, start: datetime, end: datetime, route="",
          tenant="") -> Counts:
    """What the SLO must count over [start, end): good (succeeded, under the threshold), bad (failed, or at or over
    it), not measured (succeeded without the signal)."""
    good = bad = unmeasured = 0
    for s in sent:
        if not start <= s.at < end or (route and s.route != route) or (tenant and s.tenant != tenant):
            continue
        value = s.value(signal)
        if s.failed or (value is not None and value >= threshold_ms):
            bad += 1
        elif value is None:
            unmeasured += 1
        else:
            good += 1
    return Counts(good, bad, unmeasured)


def evenly(start: datetime, count: int, every: timedelta, kind_of) -> list[Sent]:
    """`count` requests `every` apart from `start`; kind_of(i) names the i-th one's kind."""
    return [Sent(start + every * i, kind_of(i)) for i in range(count)]


def mixed(start: datetime, hours: int, count: int, shares: dict[str, float], seed: int) -> list[Sent]:
    """`count` requests at random moments of `hours` hours from `start`, of random kinds in `shares`."""
    rng = random.Random(seed)
    kinds, weights = zip(*shares.items())
    moments = sorted(rng.uniform(0, hours * 3600) for _ in range(count))
    return [Sent(start + timedelta(seconds=round(m, 3)), rng.choices(kinds, weights)[0],
                 route=rng.choice(("/v1/chat", "/v1/chat", "/v1/summarize")), tenant=rng.choice(("acme", "globex")))
            for m in moments]


def send(ingest, key, project, sent: list[Sent], service="llm-gateway", now=None) -> None:
    """Through the real ingest path, then the hours they touch materialized."""
    from analysis.rollups.materialize import materialize

    ingest(key, f.request(*[s.span() for s in sent], service=service))
    first, last = min(s.at for s in sent), max(s.at for s in sent)
    materialize(project.pk, first - timedelta(hours=1), last + timedelta(hours=1), now=now)
