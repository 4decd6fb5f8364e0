-- segment_hours of the hours aggregated before 0025, at each hour's current aggregate version (aggregated_hours),
-- cut at the default ANALYSIS_SEGMENT_EDGES (1000, 4000, 16000): a deployment with other edges reads those hours
-- from every attempt until they are aggregated again. The states as analysis/sql/_minute_states.sql writes them,
-- over each hour's current request_buckets rows (materialized_hours).
INSERT INTO segment_hours
SELECT project_id, service, hour, route, [1000, 4000, 16000] AS edges,
       if(input_tokens IS NULL, -1, toInt32(arrayCount(e -> assumeNotNull(input_tokens) >= e, edges))) AS segment,
       count() AS attempts, countIf(status = 'error') AS errors,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, sum(t_queue_ms) AS t_queue_sum, count(t_queue_ms) AS t_queue_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_conn_ms) AS t_conn_dd, sum(t_conn_ms) AS t_conn_sum, count(t_conn_ms) AS t_conn_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_first_token_ms) AS t_first_token_dd, sum(t_first_token_ms) AS t_first_token_sum, count(t_first_token_ms) AS t_first_token_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_stream_ms) AS t_stream_dd, sum(t_stream_ms) AS t_stream_sum, count(t_stream_ms) AS t_stream_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_post_ms) AS t_post_dd, sum(t_post_ms) AS t_post_sum, count(t_post_ms) AS t_post_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_retry_ms) AS t_retry_dd, sum(t_retry_ms) AS t_retry_sum, count(t_retry_ms) AS t_retry_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, sum(ttft_ms) AS ttft_sum, count(ttft_ms) AS ttft_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, sum(total_ms) AS total_sum, count(total_ms) AS total_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', ttft_ms, NULL)) AS ttft_ok_dd, countIf(ttft_ms IS NOT NULL AND status != 'error') AS ttft_ok_count,
       quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', total_ms, NULL)) AS total_ok_dd, countIf(total_ms IS NOT NULL AND status != 'error') AS total_ok_count,
       any(version)
FROM
(
    SELECT r.*, toDateTime(toStartOfHour(r.queued_at), 'UTC') AS hour, v.computed_at AS version
    FROM request_buckets AS r
    INNER JOIN
    (
        SELECT project_id, hour, max(computed_at) AS computed_at FROM aggregated_hours GROUP BY project_id, hour
    ) AS v ON v.project_id = r.project_id AND v.hour = toDateTime(toStartOfHour(r.queued_at), 'UTC')
    WHERE (r.project_id, toStartOfHour(r.queued_at), r.computed_at) IN (
              SELECT project_id, hour, max(computed_at) FROM materialized_hours GROUP BY project_id, hour)
)
GROUP BY project_id, service, hour, route, segment
