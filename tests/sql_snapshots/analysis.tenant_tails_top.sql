-- tenant_tails.sql for at most {limit} tenants, plus one row pooling the attempts of every other tenant
-- (is_top = 0, tenant ''; folded = how many tenants it holds), so the rows stay at most {limit} + 1 however many
-- tenants there are. Kept first: the tenants in {keep} (the noisy-neighbour candidates, whose arrival share the
-- diagnosis compares), then those with at least {min_count} attempts whose TTFT p95 reaches {ttft_p95_ms} or whose
-- total p95 reaches {total_p95_ms} (the outliers it looks for); then the busiest.
-- Most requests first, the pooled row last.
WITH kept AS (
    -- the kept tenants: those asked for, outlier candidates, then most attempts
    SELECT tenant
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String})
    GROUP BY tenant
    ORDER BY has({keep:Array(String)}, tenant) DESC,
             count() >= {min_count:UInt64}
             AND (ifNull(quantileExactInclusive(0.95)(ttft_ms), 0) >= {ttft_p95_ms:Float64}
                  OR ifNull(quantileExactInclusive(0.95)(total_ms), 0) >= {total_p95_ms:Float64}) DESC,
             count() DESC, tenant
    LIMIT {limit:UInt32}
)
SELECT
    tenant IN kept AS is_top,
    if(is_top, tenant, '') AS tenant_or_others,
    uniqExact(tenant) AS folded,
    count() AS requests,
    quantilesExactInclusive(0.95, 0.99)(total_ms) AS total_q, count(total_ms) AS total_count,
    quantilesExactInclusive(0.95, 0.99)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
    quantilesExactInclusive(0.95, 0.99)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String})
GROUP BY is_top, tenant_or_others
ORDER BY is_top DESC, requests DESC, tenant_or_others
