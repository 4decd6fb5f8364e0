"""The Runs pages' numbers: the slowest runs of a window (or those an id search matches, in every service of the
project), and one run's attempts and spans with its totals including retries (analysis.reads.runs)."""
from dataclasses import dataclass
from datetime import datetime, timedelta

from analysis.reads import runs as runs_
from analysis.scope import Scope

SORTS = runs_.SORTS  # besides these, a list may be ordered by any bucket of analysis.buckets.PARTS
WIDER = timedelta(days=7)  # the window an id search that found nothing offers instead
MAX_SPANS = runs_.MAX_SPANS


@dataclass(frozen=True)
class Runs:
    """runs: analysis.reads.runs.search's rows, slowest first (total, ttft and bucket_ms in ms including retries);
    wider: (start, end) of the WIDER up to the scope's end that a search which matched nothing offers instead, None
    otherwise; wider_covered: the scope's window already spans WIDER."""
    runs: list[dict]
    wider: tuple[datetime, datetime] | None
    wider_covered: bool


@dataclass(frozen=True)
class Run:
    """One run: attempts (its own, in start order, instants in epoch ns and buckets in ms), below (the engines'
    attempts under its calls: docs/cross-layer.md), spans (of its traces, at most MAX_SPANS), summary (from its
    final attempt: status, ttft_ms and total_ms including retries, t_retry_ms, services, trace ids, reused),
    truncated (MAX_SPANS reached)."""
    attempts: list[dict]
    below: list[dict]
    spans: list[dict]
    summary: dict
    truncated: bool


def build(scope: Scope, q: str = "", sort: str = "total", status: str = "", retried: bool = False) -> Runs:
    """The runs whose final attempt was queued in the scope's window, slowest first by `sort` (SORTS or a bucket of
    PARTS; ValueError otherwise), with `status` ("error", "ok" or "": any) and only the retried ones when `retried`.
    With `q` (a run id or a trace id, or its first 8+ hex characters): the runs it matches in every service of the
    project, on the scope's route and tenant."""
    matched = runs_.match(scope.project_id, scope.start, scope.end, q) if q else None
    found = runs_.search(scope.project_id, scope.start, scope.end, service="" if q else scope.service,
                         route=scope.route, tenant=scope.tenant, runs=matched, sort=sort, status=status,
                         retried=retried)
    return Runs(runs=found, wider=(scope.end - WIDER, scope.end) if q and not matched else None,
                wider_covered=scope.end - scope.start >= WIDER)


def of(scope: Scope, run_id: str) -> Run | None:
    """The run `run_id` of the scope's project with an attempt in its window (of its service when it names one, else
    of any); None when there is none."""
    attempts = runs_.attempts(scope.project_id, run_id, scope.start, scope.end, service=scope.service)
    if not attempts:
        return None
    end_ns = max(a["released_ns"] or a["start_ns"] for a in attempts)
    spans = runs_.spans(scope.project_id, [a["trace_id"] for a in attempts], attempts[0]["start_ns"], end_ns)
    attempts, below = runs_.layered(scope.project_id, attempts, spans)  # an engine's attempts under the calls
    return Run(attempts=attempts, below=below, spans=spans, summary=runs_.summary(attempts),
               truncated=len(spans) >= MAX_SPANS)
