-- Records {hours} of one project as aggregated at version {computed_at}: written after that version's rows, so a
-- recorded version always has its rows.
INSERT INTO aggregated_hours
SELECT {project_id:UInt32}, arrayJoin({hours:Array(DateTime('UTC'))}), {computed_at:DateTime64(3, 'UTC')}
