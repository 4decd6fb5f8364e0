-- Every span of the given traces of one project that started in [start, end) (any service: a trace can
-- cross several), in start order, with times as epoch nanoseconds; at most {limit}.
SELECT
    trace_id, span_id, parent_span_id, name, role, stage, service, status, status_message, attempt, retry_cause,
    toUnixTimestamp64Nano(start_at) AS start_ns, toUnixTimestamp64Nano(end_at) AS end_ns, duration_ms,
    event_names, arrayMap(t -> toUnixTimestamp64Nano(t), event_times) AS event_ns, span_attributes
FROM spans FINAL
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
  AND trace_id IN {trace_ids:Array(String)}
ORDER BY start_at, span_id
LIMIT {limit:UInt32}
