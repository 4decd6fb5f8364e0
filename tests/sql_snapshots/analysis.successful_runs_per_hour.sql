-- Successful runs (final attempt not 'error') per hour of queued_at, over [start, end): R_success of
-- cost_per_success = C_hour / R_success. Hours without a successful run are absent.
SELECT toStartOfHour(queued_at) AS hour, count() AS successful_runs
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
  AND is_final_attempt AND status != 'error'
GROUP BY hour
ORDER BY hour
