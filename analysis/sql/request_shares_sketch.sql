-- request_shares.sql for a long window: its aggregated core's per-hour states (share_hours) merged with its edges'
-- states from request_buckets (analysis/rollups/aggregates.py). Medians and quantiles within the sketch's 0.2 % of a value
-- near the rank; counts exact.
SELECT
    sum(shared) AS shared,
    quantilesDDMerge(0.002, 0.5)(t_queue_share)[1] AS t_queue_share,
    quantilesDDMerge(0.002, 0.5)(t_conn_share)[1] AS t_conn_share,
    quantilesDDMerge(0.002, 0.5)(t_first_token_share)[1] AS t_first_token_share,
    quantilesDDMerge(0.002, 0.5)(t_stream_share)[1] AS t_stream_share,
    quantilesDDMerge(0.002, 0.5)(t_post_share)[1] AS t_post_share,
    quantilesDDMerge(0.002, 0.5)(t_retry_share)[1] AS t_retry_share,
    sum(first_token_n) AS first_token_n,
    sum(prep_n) AS prep_n,
    quantilesDDMerge(0.002, 0.5)(prep_share)[1] AS prep_share,
    sum(network_n) AS network_n,
    quantilesDDMerge(0.002, 0.5)(network_share)[1] AS network_share,
    sum(retrieval_n) AS retrieval_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(retrieval_q) AS retrieval_q,
    sum(tool_n) AS tool_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(tool_q) AS tool_q,
    sum(post_stage_n) AS post_stage_n,
    quantilesDDMerge(0.002, 0.5)(post_stage_share)[1] AS post_stage_share,
    sum(decode_n) AS decode_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(ms_per_output_token_q) AS ms_per_output_token_q
FROM
(
    SELECT * EXCEPT (project_id, service, hour, route, computed_at)
    FROM share_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT {{share_states}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}}
      AND ({route:String} = '' OR route = {route:String})
      AND status != 'error'
)
