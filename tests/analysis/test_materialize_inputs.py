"""The request_buckets INSERT's optional parts (analysis/sql/materialize_request_buckets.sql: log_spans, held_runs,
http_runs) go as their empty stand-ins (_no_<part>.sql) where materialize_inputs.sql finds nothing for them to read
(analysis/rollups/materialize.py). That is right only if (1) each stand-in has its part's columns, and (2) wherever the
question says 0 the part itself reads no row: checked here on windows whose spans and log records lie all around
each part's read bounds, where the statement sent must also write exactly what the whole statement writes."""
from datetime import timedelta

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.rollups.materialize import OPTIONAL_PARTS
from analysis.sql_files import sql
from store import client
from tests import factories as f
from tests.analysis.test_materialize_logs import _send_logs

H = timedelta(hours=1)
STATEMENT = "materialize_request_buckets"
# the bundle's start from its window's start: outside, on and inside the parts' bounds (-2 h, -1 h, -5 min, +1 h, +2 h
# from the window's edges)
OFFSETS = [timedelta(minutes=m) for m in (-181, -121, -119, -61, -59, -6, -4, 30, 59, 61, 119, 121, 179)]


def _select(text: str) -> str:
    """The statement's SELECT (its CTEs and the rows it writes) without its INSERT."""
    return text.split("INSERT INTO request_buckets", 1)[1]


def _with_clause(text: str) -> str:
    """The statement's CTEs (WITH ... up to its final SELECT) without its INSERT."""
    body = _select(text)
    return body[:body.index("\nSELECT\n    a.project_id")]


def _columns(query: str, params: dict) -> list[tuple[str, str]]:
    return [(name, kind) for name, kind, *_ in client.query_rows(f"DESCRIBE ({query})", parameters=params)]


def _params(project_id: int, window) -> dict:
    start = window.replace(tzinfo=None)
    return {"project_id": project_id, "start": start, "end": start + H, "computed_at": start}


def test_each_stand_in_has_the_columns_of_its_part(alpha, clickhouse):
    project, _ = alpha
    params = _params(project.id, f.BASE)
    whole = _with_clause(sql(STATEMENT))
    for part in OPTIONAL_PARTS:
        stand_in = sql(STATEMENT, without=(part,))
        assert stand_in != sql(STATEMENT)
        assert _columns(f"{whole}\nSELECT * FROM {part}", params) == _columns(
            f"{_with_clause(stand_in)}\nSELECT * FROM {part}", params), part


def _bundle(start_ns: int, window_ns: int) -> tuple[list, dict]:
    """From start_ns: a call with a failed HTTP try and its retry (http_runs), a run named apart from its trace
    whose span of the whole call holds a failed try (held_runs), and a GenAI log event (log_spans) of an attempt queued
    30 minutes into the window (a log record of its trace, sent at start_ns: its clock may be off): (spans, record)."""
    call = f.span(name="chat gpt-4o", start_ns=start_ns, duration_ms=1500, kind=Span.SPAN_KIND_CLIENT,
                  attributes={"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                              "gen_ai.request.model": "gpt-4o"})
    tries = [f.span(name="POST", start_ns=start_ns + offset * f.MS, duration_ms=5, trace_id=call.trace_id, parent=call,
                    kind=Span.SPAN_KIND_CLIENT, status_code=status,
                    attributes={"http.method": "POST", "http.status_code": code})
             for offset, code, status in ((3, 500, f.Status.STATUS_CODE_ERROR), (450, 200, f.Status.STATUS_CODE_UNSET))]
    trace, run = f.new_trace_id(), {"llm.run.id": f"run-{start_ns}"}
    holder = f.attempt(start_ns=start_ns, trace_id=trace, attributes={**run, "llm.attempt": 2})  # the whole call
    failed = f.attempt(start_ns=start_ns + 3 * f.MS, trace_id=trace, t_first_token_ms=10, t_stream_ms=10,
                       status_code=f.Status.STATUS_CODE_ERROR, attributes={**run, "llm.attempt": 1})
    logged = f.attempt(start_ns=window_ns + 30 * 60_000 * f.MS, attributes={"gen_ai.usage.input_tokens": None})
    record = {"span": logged, "at_ms": (start_ns - logged.start_time_unix_nano) / f.MS, "event": "gen_ai.choice",
              "attributes": {"gen_ai.usage.input_tokens": 12}}
    return [call, *tries, holder, failed, logged], record


def test_a_part_said_to_have_nothing_to_read_reads_nothing(alpha, ingest):
    project, key = alpha
    windows = [f.BASE + timedelta(hours=12 * (i + 1)) for i in range(len(OFFSETS))]
    bundles = [_bundle(int((window + offset).timestamp() * 1e9), int(window.timestamp() * 1e9))
               for window, offset in zip(windows, OFFSETS)]
    ingest(key, f.request(*(s for spans, _ in bundles for s in spans)))
    _send_logs(key, *(record for _, record in bundles))
    seen = {part: set() for part in OPTIONAL_PARTS}
    counts = _with_clause(sql(STATEMENT)) + "\nSELECT " + ", ".join(
        f"(SELECT count() FROM {part}) AS {part}" for part in OPTIONAL_PARTS)
    for window in windows:
        params = _params(project.id, window)
        [inputs] = client.query(sql("materialize_inputs"), parameters=params)
        [rows] = client.query(counts, parameters=params)
        for part in OPTIONAL_PARTS:
            assert inputs[part] or rows[part] == 0, (part, window, rows)
            seen[part].add((bool(inputs[part]), rows[part] > 0))
        # what materialize() sends writes what the whole statement would
        without = tuple(p for p in OPTIONAL_PARTS if not inputs[p])
        written = [sorted(map(repr, client.query_rows(f"SELECT * FROM ({_select(text)})", parameters=params)))
                   for text in (sql(STATEMENT, without=without), sql(STATEMENT))]
        assert written[0] == written[1], (window, without)
    # not vacuous: each part had rows to read in some windows, and was left out in others
    assert all({(True, True), (False, False)} <= found for found in seen.values()), seen


def test_leaving_out_a_part_the_query_does_not_have_is_an_error():
    with pytest.raises(ValueError, match="no part"):
        sql("materialize_inputs", without=("http_runs",))
