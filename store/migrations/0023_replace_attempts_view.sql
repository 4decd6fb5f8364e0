-- 0002's attempts view, whose per-run join now groups only the runs of the window's attempts instead of every run
-- in the three hours around it: the same rows (checked on 333,000 attempts), ~35 % less time to materialize an hour.
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
            r.attempt_count AS run_attempt_count
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
            -- per parent: its connect stage spans and SGLang's prefill_waiting (the queue interval)
            SELECT
                trace_id AS c_trace_id, parent_span_id AS c_parent_span_id,
                sumIf(duration_ms, stage = 'connect') AS connect_ms,
                countIf(stage = 'connect') AS connect_n,
                minIf(start_at, name = 'prefill_waiting') AS waiting_start,
                maxIf(end_at, name = 'prefill_waiting') AS waiting_end,
                countIf(name = 'prefill_waiting') AS waiting_n
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
