-- scheduler_sweep.sql for a window that is all aggregated core (whole hours, e.g. a rollup's hour or an aligned
-- day): its stored minutes and hours only. Planning the scheduler view's call costs ~100 ms even for empty edges.
WITH window_rows AS
(
    {{scheduler_core_rows}}
)
{{scheduler_ranked}}
