-- bucket_distribution.sql per prompt-length segment (_segment.sql, cut at {edges}).
SELECT
    {{segment}} AS segment,
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY segment
ORDER BY segment
