-- Logical span counts of one project (FINAL: re-sent spans count once) and its newest ingest.
SELECT
    count() AS spans_stored,
    countIf(role = 'attempt') AS attempts_stored,
    max(ingested_at) AS last_ingested_at
FROM spans FINAL
WHERE project_id = {project_id:UInt32}
