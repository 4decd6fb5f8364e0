-- bucket_distribution.sql grouped by one dimension ({dimension}: route or tenant; '' groups everything
-- under ''), one row per value, most requests first.
SELECT
    {{dimension_value}} AS value,
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY value
ORDER BY requests DESC, value
