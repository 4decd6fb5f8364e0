-- runs_top.sql for a bucket sort ({bucket}): every attempt queued in [start, end) under runs_search's filters,
-- the top {rows} rows by that bucket's value, as (service, run id); analysis/reads/runs.py keeps each run's first, its
-- largest value. The bucket is read from every attempt of a run, so these are separate from runs_top.sql, which
-- reads final attempts and fewer columns.
-- TRICKY: a non-final attempt does not know its run's final status, so it passes the status filter here;
-- runs_search applies it (ask for more candidates then).
SELECT service, run_id
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND ({service:String} = '' OR service = {service:String})
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
  AND ({status:String} = '' OR NOT is_final_attempt OR (status = 'error') = ({status:String} = 'error'))
  AND (NOT {retried:UInt8} OR run_attempt_count > 1)
ORDER BY multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL) DESC NULLS LAST, run_id
LIMIT {rows:UInt32}
