-- Cross-layer buckets of the calls queued in [start, end) from one service to another (layer_links), per
-- (gateway service, engine service) pair and, WITH ROLLUP, pooled per gateway service (engine_service '') and over
-- all (both ''): calls, engine instances, p50/p95 and counts of t_gateway, t_network_ttft and t_network_total, and
-- the p95 of the call's and the engine's TTFT and total, the p50 of the gateway's own share of a request. {service:String} '' = every pair, else the pairs where it
-- is the gateway or the engine. A NULL bucket is left out of its quantiles and counts (not measured, not 0).
SELECT
    gateway_service, engine_service,
    count() AS calls,
    uniqExact(engine_instance) AS instances,
    quantilesExactInclusive(0.5, 0.95)(t_gateway_ms) AS t_gateway, count(t_gateway_ms) AS t_gateway_n,
    quantilesExactInclusive(0.5, 0.95)(t_network_ttft_ms) AS t_network_ttft, count(t_network_ttft_ms) AS t_network_ttft_n,
    quantilesExactInclusive(0.5, 0.95)(t_network_total_ms) AS t_network_total, count(t_network_total_ms) AS t_network_total_n,
    quantileExactInclusive(0.95)(call_ttft_ms) AS call_ttft_p95, quantileExactInclusive(0.95)(engine_ttft_ms) AS engine_ttft_p95,
    quantileExactInclusive(0.95)(call_total_ms) AS call_total_p95, quantileExactInclusive(0.95)(engine_total_ms) AS engine_total_p95,
    -- the gateway's own share of each request it served: t_gateway over t_gateway plus the call
    quantileExactInclusive(0.5)(t_gateway_ms / nullIf(t_gateway_ms + call_total_ms, 0)) AS gateway_share_p50
FROM layer_links FINAL
WHERE project_id = {project_id:UInt32}
  AND call_start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
  AND call_start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')}
  AND ({service:String} = '' OR gateway_service = {service:String} OR engine_service = {service:String})
GROUP BY gateway_service, engine_service WITH ROLLUP
ORDER BY gateway_service, engine_service
