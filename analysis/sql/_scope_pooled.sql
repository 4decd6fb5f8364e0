-- A scope read's answer from its `ranked` rows (dimension, value, the incident's and the baseline's counts and sums,
-- excess_ms, excess_rank): per dimension the {limit} values with the largest excess keep a row (is_top), the rest
-- pooled in one (value '', folded = how many). scope_excess.sql and scope_excess_layers.sql end with it.
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
