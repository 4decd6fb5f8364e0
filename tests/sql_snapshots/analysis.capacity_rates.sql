-- Requests started per minute of one service over [start, end), per region (cloud.region of the attempt's instance,
-- given as parallel arrays; '' unknown): runs (logical requests, counted in the minute their first attempt was queued)
-- and attempts (each try, in the minute it was queued). Minutes without a request are absent.
SELECT region, minute, sum(e.2) AS runs, sum(e.3) AS attempts
FROM
(
    SELECT transform(instance, {instances:Array(String)}, {regions:Array(String)}, '') AS region,
           fromUnixTimestamp64Nano(toUnixTimestamp64Nano(queued_at) - toInt64(coalesce(t_retry_ms, 0) * 1000000), 'UTC') AS run_start_at,
           arrayJoin(arrayConcat(
               if(queued_at < {end:DateTime64(9, 'UTC')}, [(toStartOfMinute(queued_at), 0, 1)], []),
               if(is_final_attempt AND run_start_at >= {start:DateTime64(9, 'UTC')}
                  AND run_start_at < {end:DateTime64(9, 'UTC')}, [(toStartOfMinute(run_start_at), 1, 0)], []))) AS e,
           e.1 AS minute
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
)
GROUP BY region, minute
ORDER BY region, minute
