-- Minutes of one service's attempts queued in [start, end) that the incidents step has not judged yet: those in its
-- queued stretch [work_start, work_end) and those of spans ingested after the step's watermark {since} (not queued
-- yet). Their count, and the first of them (1970 when none): the incidents API's `pending` and `judged_until`.
-- The start_at bounds (an hour wider, as the attempts view has) let the read skip parts by the sort key.
SELECT uniqExact(minute) AS minutes, min(minute) AS first
FROM
(
    SELECT toStartOfMinute(coalesce(queued_at, start_at)) AS minute
    FROM spans
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND role = 'attempt'
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND coalesce(queued_at, start_at) >= {start:DateTime64(9, 'UTC')}
      AND coalesce(queued_at, start_at) < {end:DateTime64(9, 'UTC')}
      AND ((coalesce(queued_at, start_at) >= {work_start:DateTime64(9, 'UTC')}
            AND coalesce(queued_at, start_at) < {work_end:DateTime64(9, 'UTC')})
           OR ingested_at > {since:DateTime64(3, 'UTC')})
)
