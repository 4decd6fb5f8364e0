-- The runs (service, run id) of one project (any service) with an attempt queued in [start, end) whose
-- trace id is {q} or starts with it ({q}: 8+ lower-case hex characters); at most 100. trace_id is in the
-- sort key, so this reads few granules. No FINAL: a replaced row has the same ids.
SELECT DISTINCT service, run_id
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND startsWith(trace_id, {q:String})
LIMIT 100
