-- The services an aggregate refresh keeps sketches for (bucket_minutes, tenant_hours): the 1000 with the most
-- attempts queued in [start, end). Sketches cost per service, and a project that sends a flood of one-attempt
-- services must not make every refresh slow; a read whose service lacks them reads every attempt (core_attempts.sql).
service IN (
    SELECT service FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{window}}
    GROUP BY service ORDER BY count() DESC, service LIMIT 1000)
