-- p95/p99 (exact) and the count of known values of total_ms, ttft_ms and t_queue_ms: the tail columns of the
-- tenant_tails*.sql queries.
quantilesExactInclusive(0.95, 0.99)(total_ms) AS total_q, count(total_ms) AS total_count,
    quantilesExactInclusive(0.95, 0.99)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
    quantilesExactInclusive(0.95, 0.99)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count
