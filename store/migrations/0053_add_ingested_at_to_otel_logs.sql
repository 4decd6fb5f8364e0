-- When each log record was stored (the store's clock, as spans.ingested_at): analysis/sql/dirty_hours.sql finds the
-- hours whose attempts got new GenAI events as log records by it. Our writer sets it (ingest/logs_mapping.py); rows
-- stored before this migration, and a Collector's own, take their Timestamp: a past, fixed instant, so old records
-- are never taken for fresh ones (a default of now() would be read as now for every old part, on every read).
ALTER TABLE otel_logs ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(Timestamp, 3, 'UTC') CODEC(Delta(8), ZSTD(1))
