-- Per instance of one service seen in [start, end), in its attempt spans or its engine metrics: the resource attribute
-- cloud.region (the latest non-empty value), gpu.count (the largest) and the GPUs its DCGM metrics label (distinct
-- `gpu` label, else `UUID`, else `device`, over the DCGM_* series). '' and 0 mean not reported; gpu.count is read
-- from an int, a double or a string ("4", "4.0").
SELECT instance,
       argMaxIf(region, at, region != '') AS region,
       max(gpu_count) AS gpu_count,
       max(dcgm_gpus) AS dcgm_gpus
FROM
(
    -- the attempt spans' resources (request_buckets keeps no resource attributes)
    SELECT instance,
           argMaxIf(resource_attributes['cloud.region'], start_at, resource_attributes['cloud.region'] != '') AS region,
           max(start_at) AS at,
           max(toUInt32(greatest(toFloat64OrZero(resource_attributes['gpu.count']), 0))) AS gpu_count,
           toUInt64(0) AS dcgm_gpus
    FROM spans
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND role = 'attempt'
      AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
    GROUP BY instance
    UNION ALL
    -- the engine metrics' resources and the GPUs their DCGM series name
    SELECT Instance AS instance,
           argMaxIf(ResourceAttributes['cloud.region'], TimeUnix, ResourceAttributes['cloud.region'] != '') AS region,
           toDateTime64(max(TimeUnix), 9, 'UTC') AS at,
           max(toUInt32(greatest(toFloat64OrZero(ResourceAttributes['gpu.count']), 0))) AS gpu_count,
           uniqExactIf(multiIf(Attributes['gpu'] != '', Attributes['gpu'], Attributes['UUID'] != '', Attributes['UUID'],
                               Attributes['device']),
                       startsWith(MetricName, 'DCGM_')
                       AND (Attributes['gpu'] != '' OR Attributes['UUID'] != '' OR Attributes['device'] != '')) AS dcgm_gpus
    FROM otel_metrics_gauge
    WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String}
      AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')}
    GROUP BY Instance
)
GROUP BY instance
ORDER BY instance
