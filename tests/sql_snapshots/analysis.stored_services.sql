-- Every service name of one project's stored spans: the names offered when one asked for is unknown.
SELECT DISTINCT service FROM spans WHERE project_id = {project_id:UInt32} ORDER BY service
