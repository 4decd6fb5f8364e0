-- Measurement coverage per service, hour, route and span form of one project over the whole hours [start, end),
-- from request_buckets, as version {computed_at} of those hours' rows (store migration 0015).
INSERT INTO coverage_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, form,
    {{coverage_columns}},
    {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
GROUP BY project_id, service, hour, route, form
