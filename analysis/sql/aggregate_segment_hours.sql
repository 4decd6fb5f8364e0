-- Per-hour sketches of every service, route and prompt-length segment (cut at {edges}) of one project over the
-- whole hours [start, end), from request_buckets, as version {computed_at} of those hours' rows (store migration 0025).
INSERT INTO segment_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, {edges:Array(UInt32)}, {{segment}} AS segment,
       {{minute_states}},
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
  AND {{sketched_services}}
GROUP BY project_id, service, hour, route, segment
