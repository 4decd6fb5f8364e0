-- The minute job reads the records stored since its watermark (analysis/sql/dirty_hours.sql): a minmax index on
-- ingested_at skips the parts and granules stored before it (parts written before this migration are read whole).
ALTER TABLE otel_logs ADD INDEX IF NOT EXISTS idx_ingested_at ingested_at TYPE minmax GRANULARITY 1
