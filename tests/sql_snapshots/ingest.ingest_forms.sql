-- Attempts of one project per service and span form (FINAL: one row per span id); form '' is `none`:
-- an attempt recognised by its attributes alone, with no timing form.
SELECT
    service,
    if(form = '', 'none', form) AS form,
    count() AS attempts
FROM spans FINAL
WHERE project_id = {project_id:UInt32} AND role = 'attempt'
GROUP BY service, form
ORDER BY service, attempts DESC, form
