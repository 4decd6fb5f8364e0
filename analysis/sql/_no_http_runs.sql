-- The empty stand-in for _http_runs.sql when the window has no HTTP client span under another span
-- (materialize_inputs.sql): its columns, no row (tests/analysis/test_materialize_inputs.py keeps the two alike).
SELECT * FROM null('t_trace_id String, t_span_id String, t_service LowCardinality(String), t_instance String,
                    t_tenant String, t_route String, t_model LowCardinality(String), t_form LowCardinality(String),
                    t_run_id String, t_cap Nullable(UInt32),
                    t_failed Array(Tuple(String, DateTime64(9, \'UTC\'), DateTime64(9, \'UTC\'), Float64, String,
                                         UInt16)),
                    t_tries UInt64, t_moved UInt8, t_queued_at DateTime64(9, \'UTC\'), t_shift_ms Float64,
                    t_tries_retry_ms Float64')
