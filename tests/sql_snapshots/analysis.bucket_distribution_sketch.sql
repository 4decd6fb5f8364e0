-- bucket_distribution.sql for a long window: the window's aggregated core merged from bucket_hours, its edges
-- sketched from request_buckets (analysis/rollups/aggregates.py), so quantiles are the sketch's (within 0.2 %) and counts
-- and means exact. The route filter applies; a tenant filter reads bucket_distribution.sql.
SELECT sum(s.attempts) AS requests, quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_queue_dd) AS t_queue_q, sum(s.t_queue_sum) / sum(s.t_queue_count) AS t_queue_mean, sum(s.t_queue_count) AS t_queue_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_conn_dd) AS t_conn_q, sum(s.t_conn_sum) / sum(s.t_conn_count) AS t_conn_mean, sum(s.t_conn_count) AS t_conn_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_first_token_dd) AS t_first_token_q, sum(s.t_first_token_sum) / sum(s.t_first_token_count) AS t_first_token_mean, sum(s.t_first_token_count) AS t_first_token_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_stream_dd) AS t_stream_q, sum(s.t_stream_sum) / sum(s.t_stream_count) AS t_stream_mean, sum(s.t_stream_count) AS t_stream_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_post_dd) AS t_post_q, sum(s.t_post_sum) / sum(s.t_post_count) AS t_post_mean, sum(s.t_post_count) AS t_post_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_retry_dd) AS t_retry_q, sum(s.t_retry_sum) / sum(s.t_retry_count) AS t_retry_mean, sum(s.t_retry_count) AS t_retry_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.ttft_dd) AS ttft_q, sum(s.ttft_sum) / sum(s.ttft_count) AS ttft_mean, sum(s.ttft_count) AS ttft_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.total_dd) AS total_q, sum(s.total_sum) / sum(s.total_count) AS total_mean, sum(s.total_count) AS total_count
FROM
(
    SELECT attempts, errors, t_queue_dd, t_queue_sum, t_queue_count, t_conn_dd, t_conn_sum, t_conn_count, t_first_token_dd, t_first_token_sum, t_first_token_count, t_stream_dd, t_stream_sum, t_stream_count, t_post_dd, t_post_sum, t_post_count, t_retry_dd, t_retry_sum, t_retry_count, ttft_dd, ttft_sum, ttft_count, total_dd, total_sum, total_count, ttft_ok_dd, ttft_ok_count, total_ok_dd, total_ok_count
    FROM bucket_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT count() AS attempts, countIf(status = 'error') AS errors,
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
) AS s
