-- The conditions of runs_top*.sql after FROM request_buckets: the window, the filters, status and retried as
-- runs_search.sql applies them.
WHERE project_id = {project_id:UInt32} AND {{current}} AND ({service:String} = '' OR service = {service:String})
  AND {{window}} AND {{filters}}
  AND ({status:String} = '' OR NOT is_final_attempt OR (status = 'error') = ({status:String} = 'error'))
  AND (NOT {retried:UInt8} OR run_attempt_count > 1)