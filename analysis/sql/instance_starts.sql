-- Instances of the service that started serving while it was already serving: an instance's first attempt (looking
-- back an hour before the window) falls inside [start, end) and at least a minute after the service's first attempt
-- (a scale-out, or a restarted pod under a new name), or whose process started in the window by the engine's metrics,
-- and the TTFT outliers after each start. An outlier is an
-- attempt whose TTFT is above {floor:Float64} (the service's TTFT p90); `after` counts the outliers that started
-- within {minutes:UInt32} minutes after their instance's first attempt.
WITH firsts AS
(
    SELECT instance, min(start_at) AS first_at
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')}
    GROUP BY instance
),
started AS
(
    SELECT instance, min(first_at) AS first_at FROM
    (
        SELECT instance, first_at FROM firsts
        WHERE first_at >= {start:DateTime64(9, 'UTC')}
          AND first_at >= (SELECT min(first_at) FROM firsts) + INTERVAL 1 MINUTE
        UNION ALL  -- process starts the engine's metrics reported (process_start_time_seconds)
        SELECT tupleElement(p, 1), tupleElement(p, 2)
        FROM (SELECT arrayJoin(arrayZip({process_instances:Array(String)}, {process_starts:Array(DateTime64(9, 'UTC'))})) AS p)
    )
    GROUP BY instance
)
SELECT
    (SELECT groupArray(instance) FROM (SELECT instance FROM started ORDER BY first_at)) AS instances,
    (SELECT groupArray(first_at) FROM (SELECT first_at FROM started ORDER BY first_at)) AS firsts,
    countIf(ttft_ms > {floor:Float64}) AS outliers,
    countIf(ttft_ms > {floor:Float64} AND start_at < first_at + toIntervalMinute({minutes:UInt32})
            AND first_at > toDateTime64(0, 9, 'UTC')) AS after
FROM request_buckets AS r
LEFT JOIN started AS f ON r.instance = f.instance
WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{window}}
