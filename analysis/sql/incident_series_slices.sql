-- incident_series.sql of one whole service and of each of its routes, tenants and instances worth judging on
-- their own, in one pass over its attempts queued in [start, end): dimension '' (value '') on the whole service's
-- rows, else 'route', 'tenant' or 'instance' and its value. A slice is kept when its dimension has two named values
-- or more, it has {min_minutes} minutes with {min_attempts} attempts (enough for a baseline) and it is among the
-- {max_slices} busiest of its dimension: a project's thousands of tenants are neither returned nor judged one by
-- one. grouping(x) is 0 where x is a key of the row's grouping set.
SELECT * EXCEPT (busy, total, named, slice_rank)
FROM
(
    SELECT *,
           uniqExact(value) OVER (PARTITION BY dimension) AS named,
           dense_rank() OVER (PARTITION BY dimension ORDER BY total DESC, value) AS slice_rank
    FROM
    (
        SELECT *,
               countIf(attempts >= {min_attempts:UInt32}) OVER (PARTITION BY dimension, value) AS busy,
               sum(attempts) OVER (PARTITION BY dimension, value) AS total
        FROM
        (
            SELECT
                toStartOfMinute(queued_at) AS minute,
                multiIf(grouping(route) = 0, 'route', grouping(tenant) = 0, 'tenant', grouping(instance) = 0,
                        'instance', '') AS dimension,
                multiIf(dimension = 'route', route, dimension = 'tenant', tenant, dimension = 'instance', instance, '')
                    AS value,
                {{incident_series_columns}}
            FROM request_buckets
            WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{window}}
            GROUP BY GROUPING SETS ((minute), (route, minute), (tenant, minute), (instance, minute))
        )
        WHERE dimension = '' OR value != ''
    )
)
WHERE dimension = '' OR (named >= 2 AND busy >= {min_minutes:UInt32} AND slice_rank <= {max_slices:UInt32})
ORDER BY dimension, value, minute
