-- TTFT outliers of one service's attempts queued in [start, end): attempts whose TTFT is above {floor:Float64}, and
-- `after`, those of them that started within {minutes:UInt32} minutes after their instance's start ({instances}
-- started at {starts}, the same order: analysis/reads/queries.py instance_starts()).
SELECT
    countIf(ttft_ms > {floor:Float64}) AS outliers,
    countIf(ttft_ms > {floor:Float64} AND indexOf({instances:Array(String)}, instance) > 0
            AND start_at < {starts:Array(DateTime64(9, 'UTC'))}[indexOf({instances:Array(String)}, instance)]
                           + toIntervalMinute({minutes:UInt32})) AS after
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
