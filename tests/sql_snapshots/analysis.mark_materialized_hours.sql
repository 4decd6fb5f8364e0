-- Records {hours} of one project as materialized at version {computed_at}: written after that version's
-- request_buckets rows, so a recorded version always has its rows (reads: _current.sql).
INSERT INTO materialized_hours
SELECT {project_id:UInt32}, arrayJoin({hours:Array(DateTime64(3, 'UTC'))}), {computed_at:DateTime64(3, 'UTC')}
