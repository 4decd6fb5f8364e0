-- The columns of tenant_hours (store migration 0017) after its keys, from request_buckets rows: attempts, then
-- the DDSketch state and count of known values of total_ms, ttft_ms and t_queue_ms.
count() AS attempts,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, count(total_ms) AS total_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, count(ttft_ms) AS ttft_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, count(t_queue_ms) AS t_queue_count
