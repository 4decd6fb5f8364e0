-- One bucket's quantile per group over one service's attempts queued in [start, end): the percentile
-- alert rule (any of p50/p90/p95/p99, exact as bucket_distribution.sql). {dimension}: route, tenant, or
-- '' for the whole service (one group ''). requests counts attempts, as bucket_distribution does.
SELECT
    {{dimension_value}} AS grp,
    count() AS requests,
    quantileExactInclusive({quantile:Float64})({{bucket_value}}) AS value,
    count({{bucket_value}}) AS n
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND ({route:String} = '' OR route = {route:String})
GROUP BY grp
ORDER BY requests DESC, grp
