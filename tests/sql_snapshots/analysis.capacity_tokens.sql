-- Requests of one service over [start, end) as a whole, per region and per instance (grouping sets; region from the
-- parallel arrays, '' unknown): runs (begun in the window) and attempts (queued in it), attempts with an admission
-- instant (the scheduler's view), the largest llm.scheduler.cap they report (NULL: none), the first and last run's
-- start, and the runs' tokens (their final attempt's
-- gen_ai.usage counts; failed runs have no output tokens): mean, exact p95 and how many runs carry each.
SELECT grouping(region) = 0 AS by_region, grouping(instance) = 0 AS by_instance, region, instance,
       countIf(is_run) AS runs,
       countIf(queued_at < {end:DateTime64(9, 'UTC')}) AS attempts,
       countIf(queued_at < {end:DateTime64(9, 'UTC')} AND admitted_at IS NOT NULL) AS admitted,
       max(cap) AS cap,
       minIf(run_start_at, is_run) AS first_run_at,
       maxIf(run_start_at, is_run) AS last_run_at,
       avgIf(input_tokens, is_run AND input_tokens IS NOT NULL) AS tokens_in_mean,
       quantileExactInclusiveIf(0.95)(input_tokens, is_run AND input_tokens IS NOT NULL) AS tokens_in_p95,
       countIf(is_run AND input_tokens IS NOT NULL) AS tokens_in_count,
       avgIf(output_tokens, is_run AND output_tokens IS NOT NULL) AS tokens_out_mean,
       quantileExactInclusiveIf(0.95)(output_tokens, is_run AND output_tokens IS NOT NULL) AS tokens_out_p95,
       countIf(is_run AND output_tokens IS NOT NULL) AS tokens_out_count
FROM
(
    SELECT instance, queued_at, admitted_at, cap, input_tokens, output_tokens,
           transform(instance, {instances:Array(String)}, {regions:Array(String)}, '') AS region,
           fromUnixTimestamp64Nano(toUnixTimestamp64Nano(queued_at) - toInt64(coalesce(t_retry_ms, 0) * 1000000), 'UTC') AS run_start_at,
           is_final_attempt AND run_start_at >= {start:DateTime64(9, 'UTC')}
               AND run_start_at < {end:DateTime64(9, 'UTC')} AS is_run
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
)
GROUP BY GROUPING SETS ((), (region), (instance))
