"""Runs: find runs (by id, trace id, or the slowest of a window), read one run's attempts and spans, sum it up.

A run is every attempt of one logical request (key: service + run id). Reads prune by project, service
(when known) and start_at, as request_buckets and spans are ordered by (project_id, service, hour).
"""
import re
from datetime import datetime, timedelta, timezone

from analysis.buckets import PARTS
from analysis.sql_files import sql as _sql
from analysis.stats import finite
from analysis.windows import utc_naive
from store import client

HEX = re.compile(r"[0-9a-fA-F]{8,32}")  # a trace id, or a prefix of one worth searching
SORTS = ("total", "ttft", "recent")  # besides these, a search may sort by any bucket of PARTS
ATTEMPT_BEFORE = timedelta(hours=2)  # a run's first attempt may start this long before its final one's window
SPAN_MARGIN = timedelta(minutes=15)  # a run's root and stage spans may start before / end after its attempts
MAX_SPANS = 2000


def _params(project_id, start, end, **more) -> dict:
    return {"project_id": project_id, "start": utc_naive(start), "end": utc_naive(end), **more}


def match(project_id, start, end, q: str) -> list[tuple[str, str]]:
    """(service, run id) of the runs with an attempt queued in [start, end) whose trace id starts with q (8+ hex
    characters, so a whole trace id too), else whose run id is q; any service."""
    q = q.strip()
    rows = []
    if HEX.fullmatch(q):  # cheap (trace_id is in the sort key), and a run id defaults to its trace id
        rows = client.query_rows(_sql("runs_match_trace"), parameters=_params(project_id, start, end, q=q.lower()))
    if not rows:
        rows = client.query_rows(_sql("runs_match_run"), parameters=_params(project_id, start, end, q=q))
    return [(service, run_id) for service, run_id in rows]


def search(project_id, start, end, service="", route="", tenant="", runs=None, sort="total", status="",
           retried=False, limit=100) -> list[dict]:
    """Runs whose final attempt was queued in [start, end), slowest first by `sort` (SORTS or a bucket of PARTS;
    ValueError otherwise).

    `runs`: the (service, run id) pairs to show (a search's matches); None: the top `limit` of the window.
    Two steps, as grouping every attempt of a long window by run is slow: runs_top picks the runs (a top-N
    sort), runs_search aggregates their attempts.
    """
    if sort not in SORTS and sort not in PARTS:
        raise ValueError(f"sort must be one of {SORTS + PARTS}, got {sort!r}")
    bucket = sort if sort in PARTS else ""  # the bucket the run's bucket_ms is of ('' = none: NULL)
    common = {"route": route, "tenant": tenant, "sort": sort, "bucket": bucket, "status": status,
              "retried": int(bool(retried))}
    if runs is None:
        wide = bucket and status  # see runs_top_bucket.sql: the status filter then applies in runs_search
        runs = _top(_params(project_id, start, end, service=service, **common), limit * 10 if wide else limit)
    if not runs:
        return []
    services = {s for s, _ in runs}
    if not service and len(services) == 1:
        service = services.pop()  # prunes the read to one service
    rows = client.query(_sql("runs_search"), parameters=_params(
        project_id, start, end, service=service, run_ids=sorted({r for _, r in runs}), limit=limit, **common))
    return [{
        "service": r["service"], "run_id": r["run_id"], "trace_id": r["final_trace_id"], "attempts": int(r["attempts"]),
        "status": r["final_status"], "causes": list(r["causes"]), "tenant": r["final_tenant"],
        "route": r["final_route"], "model": r["final_model"], "queued_at": r["first_queued_at"],
        "t_retry_ms": finite(r["run_t_retry_ms"]), "ttft_ms": finite(r["run_ttft_ms"]),
        "total_ms": finite(r["run_total_ms"]), "bucket_ms": finite(r["bucket_ms"]),
    } for r in rows]


def _top(params: dict, wanted: int) -> list[tuple[str, str]]:
    """The `wanted` best runs (service, run id) by runs_top*.sql: its rows in order, each run's first kept. A top-N
    sort of rows is much cheaper than one of runs (LIMIT 1 BY sorts every row), and a run has few rows (its
    attempts, or its final one), so twice the rows nearly always hold the runs wanted; when they do not and more
    rows exist, ask for four times as many."""
    name = "runs_top_bucket" if params["bucket"] else "runs_top"
    rows = 2 * wanted
    while True:
        found = client.query_rows(_sql(name), parameters={**params, "rows": rows})
        runs = list(dict.fromkeys((service, run_id) for service, run_id in found))
        if len(runs) >= wanted or len(found) < rows:
            return runs[:wanted]
        rows *= 4


def attempts(project_id, run_id, start, end, service="") -> list[dict]:
    """Every attempt of the run started in [start - ATTEMPT_BEFORE, end + 1 h), in start order, with its
    instants as epoch nanoseconds (*_ns) and its buckets in ms; [] when none."""
    return client.query(_sql("run_attempts"), parameters=_params(
        project_id, start - ATTEMPT_BEFORE, end + timedelta(hours=1), service=service, run_id=run_id))


def spans(project_id, trace_ids, start_ns: int, end_ns: int) -> list[dict]:
    """The spans of these traces started within SPAN_MARGIN of [start_ns, end_ns], at most MAX_SPANS."""
    start = datetime.fromtimestamp(start_ns / 1e9, tz=timezone.utc) - SPAN_MARGIN
    end = datetime.fromtimestamp(end_ns / 1e9, tz=timezone.utc) + SPAN_MARGIN
    return client.query(_sql("run_spans"), parameters=_params(
        project_id, start, end, trace_ids=sorted(set(trace_ids)), limit=MAX_SPANS))


def layered(project_id, run_attempts: list[dict], run_spans: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the run's own attempts, the attempts below them): an attempt span under an attempt of another service in the
    run's traces is the engine's attempt under a gateway's call (docs/cross-layer.md), drawn beneath that call,
    not a try of the run. Read with its instants when it is not one of the run's rows (another run id)."""
    by_id = {s["span_id"]: s for s in run_spans}
    services = {a["span_id"]: a["service"] for a in run_attempts}

    def called(span) -> bool:  # an attempt of another service above it in the trace
        seen, cur = set(), by_id.get(span["parent_span_id"])
        while cur is not None and cur["span_id"] not in seen:
            if cur["role"] == "attempt" and cur["service"] != span["service"]:
                return True
            seen.add(cur["span_id"])
            cur = by_id.get(cur["parent_span_id"])
        return False

    below_ids = {s["span_id"] for s in run_spans if s["role"] == "attempt" and called(s)}
    own = [a for a in run_attempts if a["span_id"] not in below_ids]
    known = {a["span_id"]: a for a in run_attempts if a["span_id"] in below_ids}
    missing = sorted(below_ids - set(known) - set(services))
    if missing:
        starts = [by_id[i]["start_ns"] for i in missing]
        read = client.query(_sql("span_attempts"), parameters=_params(
            project_id, datetime.fromtimestamp(min(starts) / 1e9, tz=timezone.utc) - timedelta(seconds=1),
            datetime.fromtimestamp(max(starts) / 1e9, tz=timezone.utc) + timedelta(seconds=1),
            trace_ids=sorted({by_id[i]["trace_id"] for i in missing}), span_ids=missing))
        known.update({a["span_id"]: a for a in read})
    return own or run_attempts, [known[i] for i in sorted(known, key=lambda i: by_id[i]["start_ns"])]


def summary(run_attempts: list[dict]) -> dict:
    """The run as a whole, from its final attempt: status, TTFT and total including retries, t_retry; its
    final attempt ("final"), services and trace ids; "reused" when two attempts carry the same number (then
    unrelated requests sent the same llm.run.id and were counted as one run)."""
    final = next((a for a in reversed(run_attempts) if a["is_final_attempt"]), run_attempts[-1])
    retry = final["t_retry_ms"] or 0
    return {"final": final, "status": final["status"], "attempts": len(run_attempts), "t_retry_ms": final["t_retry_ms"],
            "ttft_ms": None if final["ttft_ms"] is None else final["ttft_ms"] + retry,
            "total_ms": None if final["total_ms"] is None else final["total_ms"] + retry,
            "services": sorted({a["service"] for a in run_attempts}),
            "trace_ids": sorted({a["trace_id"] for a in run_attempts}),
            "reused": len({(a["service"], a["attempt"]) for a in run_attempts}) < len(run_attempts)}
