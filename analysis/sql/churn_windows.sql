-- Per 1-minute window of queued_at, over one service's attempts queued in [start, end): _churn_columns.sql's
-- counts, p95 and stddev. The window's aggregated core reads its minutes' rows from churn_minutes (every route's,
-- or the route asked for), its edges group request_buckets (analysis/rollups/aggregates.py): a minute lies inside one hour,
-- so the rows are the same either way. A tenant filter reads every attempt (core_start = core_end = end).
SELECT *
FROM
(
    SELECT minute, attempts, new_connections, connection_known, retries, successes, t_first_token_p95,
           t_first_token_stddev, ttft_p95, ttft_stddev
    FROM churn_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND by_route = ({route:String} != '') AND route = {route:String} AND {{core_version}}
    UNION ALL
    SELECT toStartOfMinute(queued_at) AS minute, {{churn_columns}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
      AND {{edges}} AND {{filters}}
    GROUP BY minute
)
ORDER BY minute
