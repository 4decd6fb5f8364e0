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
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND {five:UInt8} AND {route:String} = ''
    UNION ALL
    SELECT intDiv(toInt64(toUnixTimestamp(minute)) * 1000, {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms,
           attempts, errors, ttft_ok_dd, total_ok_dd, ttft_ok_count, total_ok_count
    FROM bucket_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND NOT ({five:UInt8} AND {route:String} = '') AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT bucket_ms, attempts, errors, ttft_ok_dd, total_ok_dd, ttft_ok_count, total_ok_count
    FROM
    (
        SELECT intDiv(toUnixTimestamp64Milli(queued_at), {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms, count() AS attempts, countIf(status = 'error') AS errors,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, sum(t_queue_ms) AS t_queue_sum, count(t_queue_ms) AS t_queue_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_conn_ms) AS t_conn_dd, sum(t_conn_ms) AS t_conn_sum, count(t_conn_ms) AS t_conn_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_first_token_ms) AS t_first_token_dd, sum(t_first_token_ms) AS t_first_token_sum, count(t_first_token_ms) AS t_first_token_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_stream_ms) AS t_stream_dd, sum(t_stream_ms) AS t_stream_sum, count(t_stream_ms) AS t_stream_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_post_ms) AS t_post_dd, sum(t_post_ms) AS t_post_sum, count(t_post_ms) AS t_post_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_retry_ms) AS t_retry_dd, sum(t_retry_ms) AS t_retry_sum, count(t_retry_ms) AS t_retry_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, sum(ttft_ms) AS ttft_sum, count(ttft_ms) AS ttft_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, sum(total_ms) AS total_sum, count(total_ms) AS total_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', ttft_ms, NULL)) AS ttft_ok_dd, countIf(ttft_ms IS NOT NULL AND status != 'error') AS ttft_ok_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', total_ms, NULL)) AS total_ok_dd, countIf(total_ms IS NOT NULL AND status != 'error') AS total_ok_count
        FROM request_buckets
        WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})) AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
        GROUP BY bucket_ms
    )
)
GROUP BY bucket_ms
ORDER BY bucket_ms
