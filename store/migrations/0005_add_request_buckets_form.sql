-- The span form each attempt came in (ingest/mapping.py: native, vllm, genai, openllmetry, openinference; '' for
-- an attempt known by its attributes only), so coverage (analysis/coverage.py) can say per form why a bucket or
-- signal is not measured. Rows materialized before this migration read '' until their hour is recomputed.
ALTER TABLE request_buckets ADD COLUMN IF NOT EXISTS form LowCardinality(String) AFTER model
