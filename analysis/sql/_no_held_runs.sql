-- The empty stand-in for _held_runs.sql when the window has no failed try of a named run (materialize_inputs.sql):
-- its columns, no row (tests/analysis/test_materialize_inputs.py keeps the two alike).
SELECT * FROM null('h_service LowCardinality(String), h_run_id String, h_span_id String')
