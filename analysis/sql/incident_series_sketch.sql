-- incident_series.sql for a long window: per minute, the aggregated core's minutes merged from bucket_minutes
-- (over routes) and the edges' minutes sketched from request_buckets (analysis/rollups/aggregates.py); p50 and p95 within
-- the sketch's 0.2 %, counts exact. The route filter applies; a tenant filter reads incident_series.sql.
SELECT minute, sum(attempts) AS attempts, sum(errors) AS errors,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_queue_dd), 1, 2) AS t_queue_q, sum(t_queue_count) AS t_queue_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_conn_dd), 1, 2) AS t_conn_q, sum(t_conn_count) AS t_conn_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_first_token_dd), 1, 2) AS t_first_token_q, sum(t_first_token_count) AS t_first_token_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_stream_dd), 1, 2) AS t_stream_q, sum(t_stream_count) AS t_stream_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_post_dd), 1, 2) AS t_post_q, sum(t_post_count) AS t_post_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_retry_dd), 1, 2) AS t_retry_q, sum(t_retry_count) AS t_retry_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(ttft_dd), 1, 2) AS ttft_q, sum(ttft_count) AS ttft_count,
       arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(total_dd), 1, 2) AS total_q, sum(total_count) AS total_count
FROM
(
    SELECT minute, {{minute_columns}}
    FROM bucket_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT toStartOfMinute(queued_at) AS minute, {{minute_states}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
    GROUP BY minute
)
GROUP BY minute
ORDER BY minute
