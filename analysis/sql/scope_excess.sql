-- Where an incident's excess latency sits (analysis/incidents/scope.py): per dimension (route, tenant, instance,
-- model, prompt segment: the index of input_tokens among {edges}, -1 without input_tokens) and value, the attempts
-- queued in the incident [start, end) and in the baseline [baseline_start, baseline_end), and the excess in ms of
-- the bucket named {bucket} (_bucket_value.sql): incident attempts with a value x (their mean - the value's own
-- baseline mean, or {baseline_mean_ms} when it has fewer than {min_count} baseline attempts with one). Per dimension the {limit} values with the largest excess
-- keep a row of their own (is_top = 1); the rest are pooled in one row (is_top = 0, value '', folded = how many).
WITH per_value AS (
    -- attempts, known totals and their sums per dimension and value, in each window
    WITH queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AS in_incident,
        {{bucket_value}} AS measured
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
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{filters}}
      AND (({{window}})
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
{{scope_pooled}}
