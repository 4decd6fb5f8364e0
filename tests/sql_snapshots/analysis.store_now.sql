-- The store's clock (the one ingested_at is stamped with): the periodic jobs' watermarks are on this clock.
SELECT now64(3, 'UTC')
