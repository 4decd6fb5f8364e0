-- One trace of [start, end) that layer links can come from, if there is any (materialize.py skips
-- materialize_layer_links.sql, which writes nothing without one).
SELECT trace_id
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
GROUP BY trace_id
HAVING uniqExact(service) > 1
LIMIT 1
