-- overview_series.sql for a long window (buckets of whole minutes): the aggregated core merged from
-- overview_five_minutes (every route, buckets of whole five minutes: {five} = 1) or bucket_minutes (a route, or
-- other buckets), the edges sketched from request_buckets (analysis/rollups/aggregates.py); quantiles within the sketch's
-- 0.2 %, counts exact. A tenant filter reads overview_series.sql.
SELECT bucket_ms, sum(attempts) AS requests, sum(errors) AS errors,
       quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(ttft_ok_dd) AS ttft_q,
       quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(total_ok_dd) AS total_q,
       sum(ttft_ok_count) AS ttft_count, sum(total_ok_count) AS total_count
FROM
(
    SELECT intDiv(toInt64(toUnixTimestamp(five_minutes)) * 1000, {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms,
           attempts, errors, ttft_ok_dd, total_ok_dd, ttft_ok_count, total_ok_count
    FROM overview_five_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND {five:UInt8} AND {route:String} = ''
    UNION ALL
    SELECT intDiv(toInt64(toUnixTimestamp(minute)) * 1000, {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms,
           attempts, errors, ttft_ok_dd, total_ok_dd, ttft_ok_count, total_ok_count
    FROM bucket_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND NOT ({five:UInt8} AND {route:String} = '') AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT bucket_ms, attempts, errors, ttft_ok_dd, total_ok_dd, ttft_ok_count, total_ok_count
    FROM
    (
        SELECT intDiv(toUnixTimestamp64Milli(queued_at), {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms, {{minute_states}}
        FROM request_buckets
        WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
        GROUP BY bucket_ms
    )
)
GROUP BY bucket_ms
ORDER BY bucket_ms
