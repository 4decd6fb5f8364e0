"""Runs: find runs (by id, trace id, or the slowest of a window) and lay out one run's attempts and spans.

A run is every attempt of one logical request (key: service + run id). Reads prune by project, service
(when known) and start_at, as request_buckets and spans are ordered by (project_id, service, hour).
"""
import re
from datetime import datetime, timedelta, timezone

from analysis.stats import finite
from dashboard.queries import params, sql
from store import client

HEX = re.compile(r"[0-9a-fA-F]{8,32}")  # a trace id, or a prefix of one worth searching
SORTS = ("total", "ttft", "recent")
BUCKETS = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry")
# Each lifecycle bucket and the instant it starts at (t_first_token starts after t_conn, see span-convention).
LIFECYCLE = (("t_queue", "queued_ns"), ("t_conn", "admitted_ns"), ("t_first_token", "admitted_ns"),
             ("t_stream", "first_token_ns"), ("t_post", "last_token_ns"))
ATTEMPT_BEFORE = timedelta(hours=2)  # a run's first attempt may start this long before its final one's window
SPAN_MARGIN = timedelta(minutes=15)  # a run's root and stage spans may start before / end after its attempts
MAX_SPANS = 2000
NS = 1_000_000


def match(project_id, start, end, q: str) -> list[tuple[str, str]]:
    """(service, run id) of the runs with an attempt queued in [start, end) whose trace id starts with q (8+ hex
    characters, so a whole trace id too), else whose run id is q; any service."""
    q = q.strip()
    rows = []
    if HEX.fullmatch(q):  # cheap (trace_id is in the sort key), and a run id defaults to its trace id
        rows = client.query_rows(sql("runs_match_trace"), parameters=params(project_id, start, end, q=q.lower()))
    if not rows:
        rows = client.query_rows(sql("runs_match_run"), parameters=params(project_id, start, end, q=q))
    return [(service, run_id) for service, run_id in rows]


def search(project_id, start, end, service="", route="", tenant="", runs=None, sort="total", status="",
           retried=False, limit=100) -> list[dict]:
    """Runs whose final attempt was queued in [start, end), slowest first by `sort` (SORTS or BUCKETS).

    `runs`: the (service, run id) pairs to show (a search's matches); None: the top `limit` of the window.
    Two steps, as grouping every attempt of a long window by run is slow: runs_top picks the runs (a top-N
    sort), runs_search aggregates their attempts.
    """
    common = {"route": route, "tenant": tenant, "sort": sort, "status": status, "retried": int(bool(retried))}
    if runs is None:
        wide = sort in BUCKETS and status  # see runs_top.sql: the status filter then applies in runs_search
        runs = client.query_rows(sql("runs_top"), parameters=params(
            project_id, start, end, service=service, limit=limit * 10 if wide else limit, **common))
    if not runs:
        return []
    services = {s for s, _ in runs}
    if not service and len(services) == 1:
        service = services.pop()  # prunes the read to one service
    rows = client.query(sql("runs_search"), parameters=params(
        project_id, start, end, service=service, run_ids=sorted({r for _, r in runs}), limit=limit, **common))
    return [{
        "service": r["service"], "run_id": r["run_id"], "trace_id": r["final_trace_id"], "attempts": int(r["attempts"]),
        "status": r["final_status"], "causes": list(r["causes"]), "tenant": r["final_tenant"],
        "route": r["final_route"], "model": r["final_model"], "queued_at": r["first_queued_at"],
        "t_retry_ms": finite(r["run_t_retry_ms"]), "ttft_ms": finite(r["run_ttft_ms"]),
        "total_ms": finite(r["run_total_ms"]), "bucket_ms": finite(r["bucket_ms"]),
    } for r in rows]


def attempts(project_id, run_id, start, end, service="") -> list[dict]:
    """Every attempt of the run started in [start - ATTEMPT_BEFORE, end + 1 h), in start order."""
    return client.query(sql("run_attempts"), parameters=params(
        project_id, start - ATTEMPT_BEFORE, end + timedelta(hours=1), service=service, run_id=run_id))


def spans(project_id, trace_ids, start_ns: int, end_ns: int) -> list[dict]:
    """The spans of these traces started within SPAN_MARGIN of [start_ns, end_ns], at most MAX_SPANS."""
    start = datetime.fromtimestamp(start_ns / 1e9, tz=timezone.utc) - SPAN_MARGIN
    end = datetime.fromtimestamp(end_ns / 1e9, tz=timezone.utc) + SPAN_MARGIN
    return client.query(sql("run_spans"), parameters=params(
        project_id, start, end, trace_ids=sorted(set(trace_ids)), limit=MAX_SPANS))


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


def attempt_label(a: dict) -> str:
    """'attempt 1 (error: timeout)', 'attempt 2 (ok)'."""
    if a["status"] == "error":
        return f"attempt {a['attempt']} (error{': ' + a['retry_cause'] if a['retry_cause'] else ''})"
    return f"attempt {a['attempt']} (ok)"


def _ms(ns) -> float:
    return round(ns / NS, 3)


def lifecycle(a: dict, t0: int) -> list[dict]:
    """The attempt's bucket segments [{"name", "base", "ms"}] placed on the run's time axis (ms from t0)."""
    out = []
    for name, instant in LIFECYCLE:
        ms, begin = finite(a[f"{name}_ms"]), a[instant]
        if ms is None or begin is None:
            continue
        if name == "t_first_token":
            begin += int((finite(a["t_conn_ms"]) or 0) * NS)
        out.append({"name": name, "base": _ms(begin - t0), "ms": ms})
    return out


def layout(run_attempts: list[dict], run_spans: list[dict]) -> dict:
    """The run laid out for the waterfall and the tables, times in ms since t0 (the first span's start).

    {"t0": ns, "attempts": [attempt + "label", "offset_ms", "duration_ms", "backoff_ms"],
     "rows": [{"label", "depth", "segments": [{"group", "base", "ms", "hover"}]}],
     "spans": [span + "owner", "attempt_no", "depth", "offset_ms", "events", "attributes"]}.
    Order: spans outside any attempt (the run's root and its stages), then per attempt: its span, its bucket
    split (waterfall only) and its descendant spans by start. Back-off: from the end of the previous attempt.
    """
    t0 = min([a["start_ns"] for a in run_attempts] + [s["start_ns"] for s in run_spans])
    entries = _place(run_spans, {a["span_id"]: a["attempt"] for a in run_attempts}, t0)
    own = {e["span_id"]: e for e in entries}
    rows = [_span_row(e) for e in entries if not e["owner"]]
    table = [e for e in entries if not e["owner"]]
    out, prev_end = [], None
    for a in run_attempts:
        end = own[a["span_id"]]["end_ns"] if a["span_id"] in own else (a["released_ns"] or a["start_ns"])
        backoff = _ms(a["start_ns"] - prev_end) if prev_end is not None and a["start_ns"] > prev_end else None
        attempt = {**a, "label": attempt_label(a), "offset_ms": _ms(a["start_ns"] - t0),
                   "duration_ms": _ms(end - a["start_ns"]), "backoff_ms": backoff,
                   "backoff_base_ms": _ms(prev_end - t0) if backoff else None}
        out.append(attempt)
        prev_end = end if prev_end is None else max(prev_end, end)
        rows.append(_attempt_row(attempt))
        split = [{"group": b["name"], "base": b["base"], "ms": b["ms"], "hover": f"{b['name']}: {b['ms']:g} ms"}
                 for b in lifecycle(a, t0)]
        if split:
            rows.append({"label": "buckets", "depth": 1, "segments": split})
        children = [e for e in entries if e["owner"] == a["span_id"] and e["span_id"] != a["span_id"]]
        rows += [_span_row(e) for e in children]
        table += ([own[a["span_id"]]] if a["span_id"] in own else []) + children
    return {"t0": t0, "attempts": out, "rows": rows, "spans": table}


def _place(run_spans: list[dict], attempt_nos: dict, t0: int) -> list[dict]:
    """Each span with the attempt it belongs to (its own, or its nearest attempt ancestor's; "" for none), its
    depth below that attempt (or below the trace root), its offset, events and attributes."""
    by_id = {s["span_id"]: s for s in run_spans}

    def owner(s):
        depth, cur, seen = 0, s, set()
        while cur["span_id"] not in attempt_nos and cur["parent_span_id"] in by_id and cur["span_id"] not in seen:
            seen.add(cur["span_id"])
            cur, depth = by_id[cur["parent_span_id"]], depth + 1
        return (cur["span_id"], depth) if cur["span_id"] in attempt_nos else ("", depth)

    out = []
    for s in run_spans:
        aid, depth = owner(s)
        out.append({**s, "owner": aid, "attempt_no": attempt_nos.get(aid), "depth": depth, "indent": "·" * depth,
                    "offset_ms": _ms(s["start_ns"] - t0), "duration_ms": _ms(s["end_ns"] - s["start_ns"]),
                    "events": [(n, _ms(t - s["start_ns"])) for n, t in zip(s["event_names"], s["event_ns"])],
                    "attributes": sorted(s["span_attributes"].items())})
    return sorted(out, key=lambda e: (e["start_ns"], e["depth"]))  # a parent before a child starting with it


def _attempt_row(a: dict) -> dict:
    segments = []
    if a["backoff_ms"]:
        segments.append({"group": "retry back-off", "base": a["backoff_base_ms"], "ms": a["backoff_ms"],
                         "hover": f"retry back-off before {a['label']}: {a['backoff_ms']:g} ms"})
    segments.append({"group": "failed attempt" if a["status"] == "error" else "attempt", "base": a["offset_ms"],
                     "ms": a["duration_ms"], "hover": f"{a['label']} on {a['instance'] or a['service']}: "
                                                      f"{a['duration_ms']:g} ms at +{a['offset_ms']:g} ms"})
    return {"label": a["label"], "depth": 0, "segments": segments}


def _span_row(e: dict) -> dict:
    kind = e["stage"] or e["role"]
    group = f"stage {e['stage']}" if e["stage"] else ("failed span" if e["status"] == "error" else "other span")
    return {"label": e["name"], "depth": e["depth"], "segments": [{
        "group": group, "base": e["offset_ms"], "ms": e["duration_ms"],
        "hover": f"{e['name']} ({kind}): {e['duration_ms']:g} ms at +{e['offset_ms']:g} ms"}]}
