-- One row per run (service, run id) among {run_ids} (from runs_top or runs_match) of one project whose final
-- attempt was queued in [start, end), from its attempts queued in the window. Filters ('' = any): service,
-- route, tenant; status of the final attempt ('error', or 'ok' = not 'error'); retried (1: runs of 2+ attempts).
-- run_ttft_ms / run_total_ms include retries: the final attempt's ttft / total + its t_retry.
-- Sorted by {sort} descending: 'total', 'ttft', 'recent' (latest queued), or a bucket name ({bucket}, the
-- same name; '' for the other sorts), whose largest value over the run's attempts is `bucket_ms`.
SELECT
    service,
    run_id,
    anyIf(trace_id, is_final_attempt) AS final_trace_id,
    max(run_attempt_count) AS attempts,
    anyIf(status, is_final_attempt) AS final_status,
    arraySort(groupUniqArrayIf(toString(retry_cause), status = 'error' AND retry_cause != '')) AS causes,
    anyIf(tenant, is_final_attempt) AS final_tenant,
    anyIf(route, is_final_attempt) AS final_route,
    anyIf(model, is_final_attempt) AS final_model,
    min(queued_at) AS first_queued_at,
    anyIf(t_retry_ms, is_final_attempt) AS run_t_retry_ms,
    anyIf(ttft_ms, is_final_attempt) + coalesce(run_t_retry_ms, 0) AS run_ttft_ms,
    anyIf(total_ms, is_final_attempt) + coalesce(run_t_retry_ms, 0) AS run_total_ms,
    max(multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL)) AS bucket_ms,
    multiIf({sort:String} = 'total', run_total_ms, {sort:String} = 'ttft', run_ttft_ms,
            {sort:String} = 'recent', toFloat64(toUnixTimestamp64Milli(max(queued_at))), bucket_ms) AS sort_value
FROM request_buckets
PREWHERE run_id IN {run_ids:Array(String)}  -- read first: a handful of runs among the window's attempts
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND ({service:String} = '' OR service = {service:String})
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY service, run_id
HAVING countIf(is_final_attempt) > 0
   AND ({status:String} = '' OR (final_status = 'error') = ({status:String} = 'error'))
   AND (NOT {retried:UInt8} OR attempts > 1)
ORDER BY sort_value DESC NULLS LAST, run_id
LIMIT {limit:UInt32}
