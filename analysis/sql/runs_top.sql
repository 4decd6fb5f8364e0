-- The runs of one project that runs_search should show, best first, for a run-level sort ({sort}: 'total' or
-- 'ttft', each with the run's t_retry, or 'recent'): the final attempts queued in [start, end) under runs_search's
-- filters, the top {rows} rows by {sort}, as (service, run id). A top-N sort, no GROUP BY: analysis/reads/runs.py keeps
-- each run's first row (a run whose attempts were materialized in two hours may have two final attempts) and asks
-- for more rows when fewer than the runs it wants came back.
SELECT service, run_id
FROM request_buckets
{{runs_top_filters}}
  AND is_final_attempt
ORDER BY multiIf({sort:String} = 'total', total_ms + coalesce(t_retry_ms, 0),
                 {sort:String} = 'ttft', ttft_ms + coalesce(t_retry_ms, 0),
                 toFloat64(toUnixTimestamp64Milli(queued_at))) DESC NULLS LAST,
         run_id
LIMIT {rows:UInt32}