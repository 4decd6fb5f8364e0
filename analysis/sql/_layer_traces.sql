-- The traces whose attempts of [start, end) (an hour wider each side, by start_at) span two services or more: the
-- only ones layer links can come from (materialize_layer_links.sql; layer_traces_any.sql asks whether there is one).
SELECT trace_id
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
GROUP BY trace_id
HAVING uniqExact(service) > 1
