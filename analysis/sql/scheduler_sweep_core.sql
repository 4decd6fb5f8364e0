-- scheduler_sweep.sql for a window that is all aggregated core (whole hours, e.g. a rollup's hour or an aligned
-- day): its stored minutes and hours only. The scheduler view's call, even over empty edges, made a day's sweep
-- 194 ms instead of 33.
WITH window_rows AS
(
    {{scheduler_core_rows}}
)
{{scheduler_ranked}}
{{lean_analysis}}
