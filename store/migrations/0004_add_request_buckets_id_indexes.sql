-- Skip indexes for the dashboard's run search: run_id and tenant are not in the sort key, so looking one
-- up over a day of a busy project would read the whole column. Parts written from now on get the index;
-- older parts get it as they merge or are re-materialized.
ALTER TABLE request_buckets
    ADD INDEX IF NOT EXISTS run_id_bloom run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    ADD INDEX IF NOT EXISTS tenant_bloom tenant TYPE bloom_filter(0.01) GRANULARITY 4
