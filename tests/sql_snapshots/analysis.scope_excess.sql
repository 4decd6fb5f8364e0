-- Where an incident's excess latency sits (analysis/incidents/scope.py): per dimension (route, tenant, instance,
-- model, prompt segment: the index of input_tokens among {edges}, -1 without input_tokens) and value, the attempts
-- queued in the incident [start, end) and in the baseline [baseline_start, baseline_end), and the excess in ms of
-- the bucket named {bucket} (_bucket_value.sql): incident attempts with a value x (their mean - the value's own
-- baseline mean, or {baseline_mean_ms} when it has fewer than {min_count} baseline attempts with one). Per dimension the {limit} values with the largest excess
-- keep a row of their own (is_top = 1); the rest are pooled in one row (is_top = 0, value '', folded = how many).
WITH per_value AS (
    -- attempts, known totals and their sums per dimension and value, in each window
    WITH queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AS in_incident,
        multiIf({bucket:String} = 't_queue', t_queue_ms, {bucket:String} = 't_conn', t_conn_ms,
        {bucket:String} = 't_first_token', t_first_token_ms, {bucket:String} = 't_stream', t_stream_ms,
        {bucket:String} = 't_post', t_post_ms, {bucket:String} = 't_retry', t_retry_ms,
        {bucket:String} = 'ttft', ttft_ms, {bucket:String} = 'total', total_ms, NULL) AS measured
    SELECT
        tupleElement(dv, 1) AS dimension,
        tupleElement(dv, 2) AS value,
        countIf(in_incident) AS incident_n,
        countIf(in_incident AND measured IS NOT NULL) AS incident_known,
        sumIf(coalesce(measured, 0), in_incident) AS incident_sum,
        countIf(NOT in_incident AND measured IS NOT NULL) AS baseline_known,
        sumIf(coalesce(measured, 0), NOT in_incident) AS baseline_sum
    FROM request_buckets
    ARRAY JOIN [('route', route), ('tenant', tenant), ('instance', instance), ('model', toString(model)),
                ('segment', toString(if(input_tokens IS NULL, -1,
                    toInt32(arrayCount(e -> assumeNotNull(input_tokens) >= e, {edges:Array(UInt32)})))))] AS dv
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
      AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})
           OR (start_at >= {baseline_start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
               AND start_at < {baseline_end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
               AND queued_at >= {baseline_start:DateTime64(9, 'UTC')} AND queued_at < {baseline_end:DateTime64(9, 'UTC')}))
    GROUP BY dimension, value
),
ranked AS (
    -- each value's excess over its reference (its own baseline mean when it has enough attempts there), ranked
    SELECT *,
        if(baseline_known >= {min_count:UInt32}, baseline_sum / baseline_known, {baseline_mean_ms:Float64}) AS reference_ms,
        if(incident_known > 0, incident_sum - incident_known * reference_ms, 0) AS excess_ms,
        row_number() OVER (PARTITION BY dimension ORDER BY excess_ms DESC, value) AS excess_rank
    FROM per_value
    WHERE incident_n > 0
)
SELECT
    dimension,
    excess_rank <= {limit:UInt32} AS is_top,
    if(is_top, value, '') AS value_or_pool,
    count() AS folded,
    sum(incident_n) AS incident_attempts,
    sum(incident_known) AS incident_known_total,
    sum(incident_sum) AS incident_ms,
    sum(baseline_known) AS baseline_known_total,
    sum(baseline_sum) AS baseline_ms,
    sum(excess_ms) AS excess_total_ms,
    sum(greatest(excess_ms, 0)) AS positive_excess_ms
FROM ranked
GROUP BY dimension, is_top, value_or_pool
ORDER BY dimension, is_top DESC, excess_total_ms DESC, value_or_pool
