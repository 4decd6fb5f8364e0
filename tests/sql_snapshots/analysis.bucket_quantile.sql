-- One bucket's quantile per group over one service's attempts queued in [start, end): the percentile
-- alert rule (any of p50/p90/p95/p99, exact as bucket_distribution.sql). {dimension}: route, tenant, or
-- '' for the whole service (one group ''). requests counts attempts, as bucket_distribution does.
SELECT
    multiIf({dimension:String} = 'route', route, {dimension:String} = 'tenant', tenant, '') AS grp,
    count() AS requests,
    quantileExactInclusive({quantile:Float64})(multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL)) AS value,
    count(multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL)) AS n
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String})
GROUP BY grp
ORDER BY requests DESC, grp
