-- (project_id, hour) pairs whose request_buckets rows are stale: hours of queued_at (start_at for
-- spans without one) of the spans ingested at or after {since}.
-- A stage span or a retry (attempt > 1) in the first 10 minutes of an hour also marks the hour before when an
-- attempt of its trace (or, for a retry, of its run) is queued there: its parent, its run root's attempts or the run's
-- earlier attempt may sit just across the hour boundary, and their rows change with it. (Marking that hour for every
-- such span re-materialized the whole previous hour every minute for the first 10 minutes of each hour.)
-- GenAI events sent as log records with a span context and stored since {since} mark the hour of their attempt: they
-- may give it a first or last token or token counts (materialize_request_buckets.sql's log_spans).
WITH
fresh AS
(
    SELECT project_id, service, trace_id, run_id, role, attempt, coalesce(queued_at, start_at) AS at
    FROM spans
    WHERE ingested_at >= {since:DateTime64(3, 'UTC')} AND role IN ('attempt', 'stage')
),
logged AS
(
    -- the records materialize_request_buckets.sql may read: the chunk and choice events, usage in the attributes or in a
    -- gen_ai.* event's body
    SELECT project_id, TraceId AS trace_id, SpanId AS span_id, toTimeZone(Timestamp, 'UTC') AS at
    FROM
    (
        SELECT project_id, TraceId, SpanId, Timestamp, LogAttributes, Body, if(EventName != '', EventName, LogAttributes['event.name']) AS event
        FROM otel_logs
        WHERE ingested_at >= {since:DateTime64(3, 'UTC')} AND SpanId != ''
    )
    WHERE event IN ('gen_ai.content.completion.chunk', 'gen_ai.choice')
       OR mapContains(LogAttributes, 'gen_ai.usage.input_tokens') OR mapContains(LogAttributes, 'gen_ai.usage.output_tokens')
       OR (startsWith(event, 'gen_ai.') AND match(Body, 'input_tokens|output_tokens'))
),
near AS
(
    SELECT project_id, service, trace_id, run_id, role, toStartOfHour(at) - INTERVAL 1 HOUR AS before
    FROM fresh
    WHERE (role = 'stage' OR attempt > 1) AND toStartOfHour(at - INTERVAL 10 MINUTE) < toStartOfHour(at)
)
SELECT DISTINCT project_id, hour
FROM
(
    SELECT project_id, toStartOfHour(at) AS hour FROM fresh
    UNION ALL
    SELECT project_id, toStartOfHour(queued_at) AS hour
    FROM spans
    -- the attempts queued in those hours before (the materialization's bounds on start_at); none without `near`
    WHERE role = 'attempt' AND queued_at IS NOT NULL
      AND start_at >= (SELECT min(before) FROM near) - INTERVAL 1 HOUR
      AND start_at < (SELECT max(before) FROM near) + INTERVAL 2 HOUR
      AND ((project_id, toStartOfHour(queued_at), trace_id) IN (SELECT project_id, before, trace_id FROM near)
           OR (run_id != '' AND (project_id, toStartOfHour(queued_at), service, run_id) IN (
                   SELECT project_id, before, service, run_id FROM near WHERE role = 'attempt' AND run_id != '')))
    UNION ALL
    SELECT project_id, toStartOfHour(queued_at) AS hour
    FROM spans
    -- the attempts those records are of: queued at most 2 hours before them (the materialization reads the logs of
    -- [hour - 5 min, hour + 2 h)); none without `logged`
    WHERE role = 'attempt' AND queued_at IS NOT NULL
      AND start_at >= (SELECT min(at) FROM logged) - INTERVAL 2 HOUR
      AND start_at < (SELECT max(at) FROM logged) + INTERVAL 5 MINUTE
      AND (project_id, trace_id, span_id) IN (SELECT project_id, trace_id, span_id FROM logged)
)
ORDER BY project_id, hour
