-- The attempts (request_buckets rows) of given span ids in given traces, started in [start, end): the engine
-- attempts under a run's calls (another service, in the run's traces), with the instants the waterfall draws.
SELECT
    {{waterfall_attempt_columns}}
FROM request_buckets
PREWHERE trace_id IN {trace_ids:Array(String)}
WHERE project_id = {project_id:UInt32} AND {{current}} AND span_id IN {span_ids:Array(String)}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
ORDER BY start_at
LIMIT 1000
