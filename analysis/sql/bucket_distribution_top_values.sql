-- bucket_distribution_by_dimension.sql for the {limit} values of {dimension} with the most attempts, plus one row
-- pooling the attempts of every other value (is_top = 0, value ''; folded = how many values it holds), so the
-- rows stay at most {limit} + 1 however many values there are. Busiest first, the pooled row last.
WITH top_values AS (
    -- the {limit} busiest values
    SELECT {{dimension_value}} AS value
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
      AND {{window}} AND {{filters}}
    GROUP BY value
    ORDER BY count() DESC, value
    LIMIT {limit:UInt32}
)
SELECT
    {{dimension_value}} IN top_values AS is_top,
    if(is_top, {{dimension_value}}, '') AS value,
    uniqExact({{dimension_value}}) AS folded,
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY is_top, value
ORDER BY is_top DESC, requests DESC, value
