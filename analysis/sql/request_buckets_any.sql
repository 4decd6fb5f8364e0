-- One request_buckets row (any version) that aggregating the hours [start, end) can read, if there is any: every
-- aggregate statement reads rows started from an hour before the window to an hour after it (_window.sql, and the
-- scheduler_pieces view's bounds), so without one they write nothing and aggregates.py skips them.
SELECT 1
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
LIMIT 1
