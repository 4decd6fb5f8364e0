-- The runs (service, run id) of one project (any service) with an attempt queued in [start, end) whose run
-- id is {q}; at most 100. Reads the run_id column of the window. No FINAL: a replaced row has the same ids.
SELECT DISTINCT service, run_id
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND run_id = {q:String}
LIMIT 100
