-- What materializing [start, end) (materialize_request_buckets.sql) has to read, each 1 if there is any, else 0:
-- attempts: an attempt span it reads (started from 2 hours before the window to 1 hour after it); without one it
--   writes nothing and materialize.py skips it;
-- log_spans: a log record with a span context from 5 minutes before the window to an hour after it (what
--   _log_spans.sql reads, and more: any trace);
-- held_runs: an attempt span that failed in a run named apart from its trace (llm.run.id, litellm.call_id), started
--   from an hour before the window to an hour after it (_held_runs.sql's runs);
-- http_runs: an HTTP client span under another span, started from 2 hours before the window to 2 hours after it
--   (_http_runs.sql's tries).
-- Each bound is _X.sql's own or wider, and these read every copy of a span (no FINAL): where one says 0, _X.sql
-- finds no row, and materialize.py sends its empty stand-in (_no_X.sql) instead
-- (tests/analysis/test_materialize_inputs.py).
SELECT
    (SELECT count() FROM (
        SELECT 1 FROM spans
        WHERE project_id = {project_id:UInt32} AND role = 'attempt'
          AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
          AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
        LIMIT 1)) AS attempts,
    (SELECT count() FROM (
        SELECT 1 FROM otel_logs
        WHERE project_id = {project_id:UInt32} AND SpanId != ''
          AND TimestampTime >= {start:DateTime64(9, 'UTC')} - INTERVAL 5 MINUTE
          AND TimestampTime < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
        LIMIT 1)) AS log_spans,
    (SELECT count() FROM (
        SELECT 1 FROM spans
        WHERE project_id = {project_id:UInt32} AND role = 'attempt' AND status = 'error' AND run_id != trace_id
          AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
          AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
        LIMIT 1)) AS held_runs,
    (SELECT count() FROM (
        SELECT 1 FROM spans
        PREWHERE role = 'other' AND kind = 'client'
        WHERE project_id = {project_id:UInt32} AND parent_span_id != ''
          AND (mapContains(span_attributes, 'http.request.method') OR mapContains(span_attributes, 'http.method'))
          AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
          AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
        LIMIT 1)) AS http_runs
