-- 1 when the project has any span of {service} (the incidents API's unknown_service check), no row otherwise: the
-- sort key's (project_id, service) prefix finds it without reading the rest.
SELECT 1 FROM spans WHERE project_id = {project_id:UInt32} AND service = {service:String} LIMIT 1
