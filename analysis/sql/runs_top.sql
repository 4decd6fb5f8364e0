-- The runs of one project that runs_search should show, as (service, run id), best first: the top {limit}
-- by {sort} over the attempts queued in [start, end), under the same filters as runs_search. Run-level sorts
-- ('total', 'ttft' incl. retries, 'recent') read final attempts only; a bucket sort ({bucket}: the same name,
-- '' for the others) reads every attempt and keeps each run's largest. Cheap (no GROUP BY): a top-N sort,
-- one row per run.
-- TRICKY: a non-final attempt does not know its run's final status, so with a bucket sort it passes the
-- status filter here; runs_search applies it (ask for more candidates then).
SELECT service, run_id
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND ({service:String} = '' OR service = {service:String})
  AND {{window}} AND {{filters}}
  AND (is_final_attempt OR {sort:String} NOT IN ('total', 'ttft', 'recent'))
  AND ({status:String} = '' OR NOT is_final_attempt OR (status = 'error') = ({status:String} = 'error'))
  AND (NOT {retried:UInt8} OR run_attempt_count > 1)
ORDER BY multiIf({sort:String} = 'total', total_ms + coalesce(t_retry_ms, 0),
                 {sort:String} = 'ttft', ttft_ms + coalesce(t_retry_ms, 0),
                 {sort:String} = 'recent', toFloat64(toUnixTimestamp64Milli(queued_at)),
                 {{bucket_value}}) DESC NULLS LAST,
         run_id
LIMIT 1 BY service, run_id
LIMIT {limit:UInt32}
