-- The services of one project with attempts started in [start, end), busiest first: the service picker.
-- Counted by start_at (what the sort key holds), not queued_at, and without FINAL: a picker's counts are a
-- hint, and this reads only the key columns, so every page stays fast over a day of a busy project.
SELECT service, count() AS requests
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
GROUP BY service
ORDER BY requests DESC, service
