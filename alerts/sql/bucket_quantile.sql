-- One bucket's quantile per group over one service's attempts queued in [start, end): the percentile
-- alert rule (any of p50/p90/p95/p99, exact as bucket_distribution.sql). {group}: route, tenant, or
-- anything else for the whole service (''). requests counts attempts, as bucket_distribution does.
SELECT
    multiIf({group:String} = 'route', route, {group:String} = 'tenant', tenant, '') AS grp,
    count() AS requests,
    quantileExactInclusive({quantile:Float64})(multiIf(
        {bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, total_ms)) AS value,
    count(multiIf(
        {bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, total_ms)) AS n
FROM request_buckets FINAL
WHERE project_id = {project_id:UInt32} AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND ({route:String} = '' OR route = {route:String})
GROUP BY grp
ORDER BY requests DESC, grp
