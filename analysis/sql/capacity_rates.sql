-- Requests started per minute of one service over [start, end), per region (cloud.region of the attempt's instance,
-- given as parallel arrays; '' unknown): runs (logical requests, counted in the minute their first attempt was queued)
-- and attempts (each try, in the minute it was queued). Minutes without a request are absent.
SELECT region, minute, sum(e.2) AS runs, sum(e.3) AS attempts
FROM
(
    SELECT transform(instance, {instances:Array(String)}, {regions:Array(String)}, '') AS region,
           {{run_start}} AS run_start_at,
           arrayJoin(arrayConcat(
               if(queued_at < {end:DateTime64(9, 'UTC')}, [(toStartOfMinute(queued_at), 0, 1)], []),
               if(is_final_attempt AND run_start_at >= {start:DateTime64(9, 'UTC')}
                  AND run_start_at < {end:DateTime64(9, 'UTC')}, [(toStartOfMinute(run_start_at), 1, 0)], []))) AS e,
           e.1 AS minute
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
      AND {{capacity_rows}} AND {{filters}}
)
GROUP BY region, minute
ORDER BY region, minute
