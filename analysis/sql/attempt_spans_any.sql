-- One attempt span that materializing [start, end) can read, if there is any: materialize_request_buckets.sql
-- reads only attempt spans started from 2 hours before the window to 1 hour after it (and what hangs under them),
-- so without one it writes nothing and materialize.py skips it.
SELECT 1
FROM spans
WHERE project_id = {project_id:UInt32} AND role = 'attempt'
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
LIMIT 1
