-- scope_excess.sql's rows for the engines below a gateway (layer_links: its calls seen at two layers): per dimension
-- (engine: the engine service; engine_instance: "service instance") and value, the gateway's calls queued in the
-- incident [start, end) and in the baseline [baseline_start, baseline_end), and the excess of the call's total in
-- ms (each value's own baseline mean when it has {min_count} calls there, else the baseline mean of all the
-- gateway's linked calls). Same columns and pooling as scope_excess.sql, read by analysis/incidents/scope.py.
WITH per_value AS (
    WITH call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')} AS in_incident
    SELECT
        tupleElement(dv, 1) AS dimension,
        tupleElement(dv, 2) AS value,
        countIf(in_incident) AS incident_n,
        countIf(in_incident AND call_total_ms IS NOT NULL) AS incident_known,
        sumIf(coalesce(call_total_ms, 0), in_incident) AS incident_sum,
        countIf(NOT in_incident AND call_total_ms IS NOT NULL) AS baseline_known,
        sumIf(coalesce(call_total_ms, 0), NOT in_incident) AS baseline_sum
    FROM layer_links FINAL
    ARRAY JOIN [('engine', toString(engine_service)), ('engine_instance', concat(engine_service, ' ', engine_instance))] AS dv
    WHERE project_id = {project_id:UInt32} AND gateway_service = {service:String}
      AND ((call_start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
            AND call_start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
            AND call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')})
           OR (call_start_at >= {baseline_start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
               AND call_start_at < {baseline_end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
               AND call_queued_at >= {baseline_start:DateTime64(9, 'UTC')}
               AND call_queued_at < {baseline_end:DateTime64(9, 'UTC')}))
    GROUP BY dimension, value
),
pooled AS (
    -- the baseline mean of all the gateway's linked calls, per dimension: the reference of a value with few calls
    SELECT dimension AS p_dimension, sum(baseline_sum) / nullIf(sum(baseline_known), 0) AS pooled_ms
    FROM per_value GROUP BY dimension
),
referenced AS (
    SELECT v.*, if(baseline_known >= {min_count:UInt32}, baseline_sum / baseline_known, p.pooled_ms) AS reference_ms
    FROM per_value AS v INNER JOIN pooled AS p ON p.p_dimension = v.dimension
),
ranked AS (
    SELECT *,
        if(incident_known > 0 AND reference_ms IS NOT NULL, incident_sum - incident_known * reference_ms, 0) AS excess_ms,
        row_number() OVER (PARTITION BY dimension ORDER BY excess_ms DESC, value) AS excess_rank
    FROM referenced
    WHERE incident_n > 0
)
{{scope_pooled}}
