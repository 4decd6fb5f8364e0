-- The empty stand-in for _log_spans.sql when the window has no log record to read (materialize_inputs.sql): its
-- columns, no row (tests/analysis/test_materialize_inputs.py keeps the two alike).
SELECT * FROM null('l_trace_id String, l_span_id String, l_first_token_at Nullable(DateTime64(9, \'UTC\')),
                    l_last_token_at Nullable(DateTime64(9, \'UTC\')), l_input_tokens Nullable(UInt32),
                    l_output_tokens Nullable(UInt32)')
