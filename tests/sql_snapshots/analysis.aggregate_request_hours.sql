-- Attempts per service, route and hour of queued_at of one project over the whole hours [start, end), counted as
-- the pickers count them (logical: one per attempt, in each hour's latest materialization), as version
-- {computed_at} of those hours' rows.
INSERT INTO request_hours
SELECT project_id, service, route, toStartOfHour(queued_at) AS hour, count(),
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
GROUP BY project_id, service, route, hour
