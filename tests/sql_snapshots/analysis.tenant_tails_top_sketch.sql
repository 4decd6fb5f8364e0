-- tenant_tails_top.sql for a long window: one pass over the window's aggregated core (tenant_service_hours, or
-- tenant_hours for a route) and its edges sketched from request_buckets (analysis/rollups/aggregates.py). Tenants are kept as there (asked for, then outliers by
-- their sketched p95, then the busiest); the others' row merges their sketches. Quantiles within the sketch's 0.2 %
-- of a value near the rank, counts exact.
WITH tenants AS
(
    SELECT tenant, sum(attempts) AS requests,
           finalizeAggregation(total_state) AS total_all, sum(total_count) AS total_n,
           finalizeAggregation(ttft_state) AS ttft_all, sum(ttft_count) AS ttft_n,
           finalizeAggregation(t_queue_state) AS t_queue_all, sum(t_queue_count) AS t_queue_n,
           -- the states themselves, merged into one per tenant, for the pooled row
           quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_dd) AS total_state,
           quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_dd) AS ttft_state,
           quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_queue_dd) AS t_queue_state
    FROM
    (
        -- the core: over all routes, or the route asked for
        SELECT tenant, attempts, total_dd, total_count, ttft_dd, ttft_count, t_queue_dd, t_queue_count
        FROM tenant_service_hours
        WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
          AND {route:String} = ''
        UNION ALL
        SELECT tenant, attempts, total_dd, total_count, ttft_dd, ttft_count, t_queue_dd, t_queue_count
        FROM tenant_hours
        WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
          AND {route:String} != '' AND route = {route:String}
        UNION ALL
        SELECT tenant, count() AS attempts,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, count(total_ms) AS total_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, count(ttft_ms) AS ttft_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, count(t_queue_ms) AS t_queue_count
        FROM request_buckets
        WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
          AND ({route:String} = '' OR route = {route:String})
        GROUP BY tenant
    )
    GROUP BY tenant
),
ranked AS
(
    -- the kept tenants rank within {limit}: asked for, outlier candidates, then most attempts (one pass over tenants)
    SELECT *, row_number() OVER (
               ORDER BY has({keep:Array(String)}, tenant) DESC,
                        requests >= {min_count:UInt64}
                        AND (if(ttft_n > 0, ttft_all[2], 0) >= {ttft_p95_ms:Float64}
                             OR if(total_n > 0, total_all[2], 0) >= {total_p95_ms:Float64}) DESC,
                        requests DESC, tenant) <= {limit:UInt32} AS kept
    FROM tenants
)
SELECT
    kept AS is_top,
    if(is_top, tenant, '') AS tenant_or_others,
    uniqExact(tenant) AS folded,
    sum(requests) AS requests,
    arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(total_state), 2, 2) AS total_q, sum(total_n) AS total_count,
    arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(ttft_state), 2, 2) AS ttft_q, sum(ttft_n) AS ttft_count,
    arraySlice(quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(t_queue_state), 2, 2) AS t_queue_q, sum(t_queue_n) AS t_queue_count
FROM ranked
GROUP BY is_top, tenant_or_others
ORDER BY is_top DESC, requests DESC, tenant_or_others
