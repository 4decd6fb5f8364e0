-- 0023's attempts view, which also gives the sums of each attempt's own stage spans (own_prep_ms ... own_post_stage_ms)
-- from the per-parent aggregate it already makes for the connect stages: materializing an hour aggregated the same
-- stage spans a second time for them (one FINAL scan and one join fewer).
CREATE OR REPLACE VIEW attempts AS
SELECT
    * EXCEPT (d_queue, d_first, d_stream, d_post, d_total, d_ttft),
    if(d_queue >= 0, d_queue, NULL) AS t_queue_ms,
    if(d_first >= 0, d_first, NULL) AS t_first_token_ms,
    if(d_stream >= 0, d_stream, NULL) AS t_stream_ms,
    if(d_post >= 0, d_post, NULL) AS t_post_ms,
    if(d_total >= 0, d_total, NULL) AS total_ms,
    if(d_ttft >= 0, d_ttft, NULL) AS ttft_ms
FROM
(
    SELECT
        *,
        (toUnixTimestamp64Nano(admitted_at) - toUnixTimestamp64Nano(queued_at)) / 1e6 AS d_queue,
        (toUnixTimestamp64Nano(first_token_at) - toUnixTimestamp64Nano(admitted_at)) / 1e6 - coalesce(t_conn_ms, 0) AS d_first,
        (toUnixTimestamp64Nano(last_token_at) - toUnixTimestamp64Nano(first_token_at)) / 1e6 AS d_stream,
        (toUnixTimestamp64Nano(released_at) - toUnixTimestamp64Nano(last_token_at)) / 1e6 AS d_post,
        (toUnixTimestamp64Nano(released_at) - toUnixTimestamp64Nano(queued_at)) / 1e6 AS d_total,
        (toUnixTimestamp64Nano(first_token_at) - toUnixTimestamp64Nano(queued_at)) / 1e6 AS d_ttft
    FROM
    (
        SELECT
            a.* REPLACE (
                if(c.waiting_n > 0, c.waiting_start, a.queued_at) AS queued_at,
                if(c.waiting_n > 0, c.waiting_end, a.admitted_at) AS admitted_at
            ),
            -- t_conn: 0 on a reused connection, the connect stages' sum on a new one, else unknown
            multiIf(a.connection_reused = true, 0.,
                    a.connection_reused = false AND c.connect_n > 0, c.connect_ms, NULL) AS t_conn_ms,
            -- t_retry: on the final (latest-started) attempt of a run, time since its first attempt started
            if(a.span_id = r.final_span_id,
               (toUnixTimestamp64Nano(a.start_at) - toUnixTimestamp64Nano(r.first_start_at)) / 1e6, NULL) AS t_retry_ms,
            r.attempt_count AS run_attempt_count,
            -- the sums (ms) of the attempt's own stage spans by kind, NULL for a kind with none (request_buckets' stage
            -- sums add the run's root span's: analysis/sql/materialize_request_buckets.sql)
            if(c.prep_n > 0, c.prep_sum, NULL) AS own_prep_ms,
            if(c.network_n > 0, c.network_sum, NULL) AS own_network_ms,
            if(c.retrieval_n > 0, c.retrieval_sum, NULL) AS own_retrieval_ms,
            if(c.tool_n > 0, c.tool_sum, NULL) AS own_tool_ms,
            if(c.post_n > 0, c.post_sum, NULL) AS own_post_stage_ms
        FROM
        (
            SELECT * FROM spans FINAL
            WHERE project_id = {project_id:UInt32} AND role = 'attempt'
              AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
              AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
              AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
        ) AS a
        LEFT JOIN
        (
            -- per parent: its connect stage spans, SGLang's prefill_waiting (the queue interval) and its stage spans' sums
            SELECT
                trace_id AS c_trace_id, parent_span_id AS c_parent_span_id,
                sumIf(duration_ms, stage = 'connect') AS connect_ms,
                countIf(stage = 'connect') AS connect_n,
                minIf(start_at, name = 'prefill_waiting') AS waiting_start,
                maxIf(end_at, name = 'prefill_waiting') AS waiting_end,
                countIf(name = 'prefill_waiting') AS waiting_n,
                sumIf(duration_ms, role = 'stage' AND stage IN ('tokenize', 'prompt_build', 'policy')) AS prep_sum,
                countIf(role = 'stage' AND stage IN ('tokenize', 'prompt_build', 'policy')) AS prep_n,
                sumIf(duration_ms, role = 'stage' AND stage = 'network') AS network_sum,
                countIf(role = 'stage' AND stage = 'network') AS network_n,
                sumIf(duration_ms, role = 'stage' AND stage = 'retrieval') AS retrieval_sum,
                countIf(role = 'stage' AND stage = 'retrieval') AS retrieval_n,
                sumIf(duration_ms, role = 'stage' AND stage = 'tool') AS tool_sum,
                countIf(role = 'stage' AND stage = 'tool') AS tool_n,
                sumIf(duration_ms, role = 'stage' AND stage = 'post') AS post_sum,
                countIf(role = 'stage' AND stage = 'post') AS post_n
            FROM spans FINAL
            WHERE project_id = {project_id:UInt32} AND role != 'attempt' AND parent_span_id != ''
              AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
              AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
            GROUP BY trace_id, parent_span_id
        ) AS c ON c.c_trace_id = a.trace_id AND c.c_parent_span_id = a.span_id
        LEFT JOIN
        (
            -- per run (service, run_id): when it started, its final attempt, its size
            SELECT service AS r_service, run_id AS r_run_id, min(start_at) AS first_start_at,
                   argMax(span_id, (start_at, attempt)) AS final_span_id, count() AS attempt_count
            FROM spans FINAL
            WHERE project_id = {project_id:UInt32} AND role = 'attempt'
              AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
              AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
              -- only the runs of the window's attempts (the others match no row of a): a run of the window is still
              -- counted whole, its attempts before the window included
              AND run_id IN (
                  SELECT run_id FROM spans
                  WHERE project_id = {project_id:UInt32} AND role = 'attempt'
                    AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
                    AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                    AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})
            GROUP BY service, run_id
        ) AS r ON r.r_service = a.service AND r.r_run_id = a.run_id
    )
)
