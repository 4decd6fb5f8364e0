-- Attempts per service, route and hour of queued_at of one project over the whole hours [start, end), counted as
-- the pickers count them (logical: one per span id), as version {computed_at} of those hours' rows.
INSERT INTO request_hours
SELECT project_id, service, route, toStartOfHour(queued_at) AS hour, uniqExact(trace_id, span_id),
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND {{window}}
GROUP BY project_id, service, route, hour
