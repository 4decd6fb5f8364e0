-- Scheduler state of each instance of each of {services} (docs/span-convention.md, "Scheduler state over time";
-- empty: every service of the project, as one with service '') over the window [start, end), each service ranked
-- on its own: the scheduler_pieces view's sweep of the attempts queued or in flight during the
-- window's edges (one call: the view leaves out the hours of its aggregated core [core_start, core_end)), with the
-- core's stored minutes and hours (analysis/rollups/aggregates.py; an empty core when core_start = core_end = end), grouped into buckets of {bucket_ms} ms
-- (epoch-aligned; whole minutes when the window has a core). Route and tenant filters do not apply (an instance's
-- queue is every route's and tenant's). Two groupings:
-- * per instance and bucket (tenant = ''): cap (the llm.scheduler.cap of the latest attempt queued so far, so a
--   cap changed mid-window counts from then on; NULL unknown), backlog_ms (queue_depth > 0), gap_ms (... and
--   in_flight < cap), queue_ms / in_flight_ms (integrals, count x ms), maxima, covered_ms;
-- * per tenant (instance = ''): in_flight_backlog_ms, the slot time its attempts held while their
--   instance had a queue, and its attempts.
-- Bounded: the {limit} instances with the most backlog (then in-flight time) and the {limit} tenants with the most
-- slot time during backlog keep their rows; every other instance's rows are pooled per bucket, and every other
-- tenant's into one row (is_others = 1, names ''; folded = how many instances or tenants they hold), so the rows
-- stay at most ({limit} + 1) x buckets + {limit} + 1 however many instances and tenants there are. capped_backlog_ms:
-- backlog of instances that reported a cap at some point (gap_fraction's denominator); uncapped_backlog_ms: backlog
-- in buckets where the instance's cap was still unknown.
WITH window_rows AS
(
    {{scheduler_core_rows}}
    UNION ALL
    SELECT if(empty({services:Array(String)}), '', service) AS service, is_instance_row, instance, tenant,
           last_cap AS cap, cap_at, backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max, in_flight_backlog_ms, attempts,
           if(is_instance_row, intDiv(bucket_ns, 1000000), 0) AS bucket_start_ms
    FROM scheduler_pieces(project_id = {project_id:UInt32}, services = {services:Array(String)},
                          start = {start:DateTime64(9, 'UTC')}, end = {end:DateTime64(9, 'UTC')},
                          core_start = {core_start:DateTime64(9, 'UTC')},
                          core_end = {core_end:DateTime64(9, 'UTC')}, bucket_ms = {bucket_ms:UInt32})
)
{{scheduler_ranked}}
{{lean_analysis}}
