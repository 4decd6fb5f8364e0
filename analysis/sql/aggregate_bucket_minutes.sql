-- Per-minute sketches of every service and route of one project over the whole hours [start, end), from
-- request_buckets, as version {computed_at} of those hours' rows (store migration 0014).
INSERT INTO bucket_minutes
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, toStartOfMinute(queued_at) AS minute,
       {{minute_states}},
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
  AND {{sketched_services}}
GROUP BY project_id, service, hour, route, minute
