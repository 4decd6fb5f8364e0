-- p50/p95/p99 (quantilesExactInclusive: exact, linear interpolation between closest ranks, as numpy's
-- default), mean and count of each bucket in ms over one service's attempts queued in [start, end).
-- t_retry is set on final attempts only, so its distribution is over runs. NULL buckets are skipped.
SELECT
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
