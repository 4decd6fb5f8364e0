-- Successful runs (final attempt not 'error') per hour of queued_at, over [start, end): R_success of
-- cost_per_success = C_hour / R_success. Hours without a successful run are absent.
SELECT toStartOfHour(queued_at) AS hour, count() AS successful_runs
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
  AND is_final_attempt AND status != 'error'
GROUP BY hour
ORDER BY hour
