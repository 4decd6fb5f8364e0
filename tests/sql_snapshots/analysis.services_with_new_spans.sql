-- (project_id, service) pairs with attempt or stage spans ingested in (since, until] that may lie in the recent
-- window starting at {start}: what the minute diagnosis has not read yet. The bound on start_at (an hour of
-- margin, as the attempts view has) skips partitions and hours of the sort key, so a backfill of old days
-- costs nothing here; ingested_at is not in the key and is filtered on the remaining rows.
SELECT project_id, service
FROM spans
WHERE start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
  AND ingested_at > {since:DateTime64(3, 'UTC')} AND ingested_at <= {until:DateTime64(3, 'UTC')}
  AND role IN ('attempt', 'stage')
GROUP BY project_id, service
ORDER BY project_id, service
