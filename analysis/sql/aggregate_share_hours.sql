-- Per-request shares' sketches per service, hour and route of one project over the whole hours [start, end), from
-- successful request_buckets rows, as version {computed_at} of those hours' rows (store migration 0021).
INSERT INTO share_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route,
       {{share_states}},
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
  AND {{sketched_services}}
  AND status != 'error'
GROUP BY project_id, service, hour, route
