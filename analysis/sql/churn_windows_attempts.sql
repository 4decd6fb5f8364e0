-- churn_windows.sql for a window without an aggregated core: every attempt queued in [start, end) grouped by
-- minute, without the union with churn_minutes (its version test costs a short window ~10 ms of ~40).
SELECT toStartOfMinute(queued_at) AS minute, {{churn_columns}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY minute
ORDER BY minute
