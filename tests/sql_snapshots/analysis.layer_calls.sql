-- One service's attempts queued in [start, end), and how many of them are calls linked to an attempt of another
-- service below them (seen at both layers, layer_links): the rest were seen at one layer only.
SELECT
    (SELECT count() FROM request_buckets
     WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}) AS attempts,
    (SELECT uniqExact(call_span_id) FROM layer_links FINAL
     WHERE project_id = {project_id:UInt32} AND gateway_service = {service:String}
       AND call_start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
       AND call_start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
       AND call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')}) AS linked_down
