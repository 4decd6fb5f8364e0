-- incident_series.sql of each of {services} as a whole and of each of its routes, tenants and instances worth
-- judging on their own, in one pass over their attempts queued in [start, end): dimension '' (value '') on the whole
-- service's rows, else 'route', 'tenant' or 'instance' and its value. A slice is kept when its dimension has two named values
-- or more, it has {min_minutes} minutes with {min_attempts} attempts (enough for a baseline) and it is among the
-- {max_slices} busiest of its dimension: a project's thousands of tenants are neither returned nor judged one by
-- one. The window's aggregated core reads its minutes' rows from incident_minutes (the same rows: a minute lies
-- inside one hour), its edges group request_buckets (analysis/rollups/aggregates.py): the incidents step reads the same
-- hours every minute.
SELECT * EXCEPT (busy, total, named, slice_rank)
FROM
(
    SELECT *,
           uniqExact(value) OVER (PARTITION BY service, dimension) AS named,
           dense_rank() OVER (PARTITION BY service, dimension ORDER BY total DESC, value) AS slice_rank
    FROM
    (
        SELECT *,
               countIf(attempts >= {min_attempts:UInt32}) OVER (PARTITION BY service, dimension, value) AS busy,
               sum(attempts) OVER (PARTITION BY service, dimension, value) AS total
        FROM
        (
            SELECT service, minute, dimension, value, attempts, errors, t_queue_q, t_queue_count, t_conn_q, t_conn_count,
                   t_first_token_q, t_first_token_count, t_stream_q, t_stream_count, t_post_q, t_post_count,
                   t_retry_q, t_retry_count, ttft_q, ttft_count, total_q, total_count
            FROM incident_minutes
            WHERE project_id = {project_id:UInt32} AND service IN {services:Array(String)} AND {{core_version}}
            UNION ALL
            SELECT *
            FROM
            (
                SELECT service, {{incident_slice_rows}}
                FROM request_buckets
                WHERE project_id = {project_id:UInt32} AND {{current}} AND service IN {services:Array(String)}
                  AND {{edges}}
                GROUP BY GROUPING SETS ((service, minute), (service, route, minute), (service, tenant, minute),
                                        (service, instance, minute))
            )
            WHERE dimension = '' OR value != ''
        )
    )
)
WHERE dimension = '' OR (named >= 2 AND busy >= {min_minutes:UInt32} AND slice_rank <= {max_slices:UInt32})
ORDER BY service, dimension, value, minute
