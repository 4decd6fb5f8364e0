-- Per minute of queued_at over one service's attempts queued in [start, end) (one route / tenant / instance, '' = all):
-- the per-minute series incident detection judges (analysis/incidents/), as _incident_series_columns.sql.
SELECT
    toStartOfMinute(queued_at) AS minute,
    {{incident_series_columns}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}} AND ({instance:String} = '' OR instance = {instance:String})
GROUP BY minute
ORDER BY minute
