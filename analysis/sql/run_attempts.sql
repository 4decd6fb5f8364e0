-- Every attempt of one run (service '' = any service) that started in [start, end), in start order, with
-- its lifecycle instants as epoch nanoseconds (exact offsets for the waterfall).
SELECT
    {{waterfall_attempt_columns}}
FROM request_buckets
PREWHERE run_id = {run_id:String}  -- read first: one run among the project's attempts
WHERE project_id = {project_id:UInt32} AND {{current}} AND ({service:String} = '' OR service = {service:String})
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
ORDER BY start_at, attempt, service
LIMIT 1000
