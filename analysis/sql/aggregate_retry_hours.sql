-- Retry counts per service, hour and route of one project over the whole hours [start, end), from request_buckets,
-- as version {computed_at} of those hours' rows (store migration 0029).
INSERT INTO retry_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route,
       {{retry_counts}},
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
GROUP BY project_id, service, hour, route
