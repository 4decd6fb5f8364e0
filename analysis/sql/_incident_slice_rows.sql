-- The rows of incident_minutes (store migration 0043) grouped from request_buckets: a row per minute of the whole
-- service (dimension '', value '') and per route, tenant and instance with a name (grouping(x) is 0 where x is a key
-- of the row's grouping set). Used as `SELECT {{incident_slice_rows}} FROM request_buckets WHERE ... GROUP BY
-- GROUPING SETS ((minute), (route, minute), (tenant, minute), (instance, minute))`, keeping the rows with
-- dimension '' or a value.
toStartOfMinute(queued_at) AS minute,
multiIf(grouping(route) = 0, 'route', grouping(tenant) = 0, 'tenant', grouping(instance) = 0, 'instance', '')
    AS dimension,
multiIf(dimension = 'route', route, dimension = 'tenant', tenant, dimension = 'instance', instance, '') AS value,
{{incident_series_columns}}
