-- The (project_id, service) pairs with attempt or stage spans ingested in (since, until], with the first minute and
-- the end of the last minute those spans fall in (of queued_at, start_at without one) and the newest ingested_at:
-- the minutes the incidents step has to judge, whatever the service sends afterwards, and what their hours' buckets
-- must have been materialized after (analysis/incidents/queue.py). ingested_at is not in the sort key and is
-- filtered on every row, as dirty_hours.sql does every minute.
SELECT project_id, service,
       toStartOfMinute(min(coalesce(queued_at, start_at))) AS first,
       toStartOfMinute(max(coalesce(queued_at, start_at))) + INTERVAL 1 MINUTE AS last_end,
       max(ingested_at) AS newest_ingested_at
FROM spans
WHERE ingested_at > {since:DateTime64(3, 'UTC')} AND ingested_at <= {until:DateTime64(3, 'UTC')}
  AND role IN ('attempt', 'stage')
GROUP BY project_id, service
ORDER BY project_id, service
