-- bucket_distribution.sql per prompt-length segment: segment i holds input_tokens in
-- [edges[i], edges[i+1]) (0: below edges[1]; length(edges): at or above the last edge);
-- attempts without input_tokens form segment -1.
SELECT
    if(input_tokens IS NULL, -1, toInt32(arrayCount(e -> assumeNotNull(input_tokens) >= e, {edges:Array(UInt32)}))) AS segment,
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY segment
ORDER BY segment
