"""The verdicts of time waiting in the queue: a backlog, slots idle under it, retries feeding it."""
from analysis.diagnosis.verdicts.record import B4, PLAYBOOK, SIGNATURES, TRIAGE, Verdict, fix

QUEUE = (("scheduler", {}), ("runs", {"bucket": "t_queue"}))

VERDICTS = [
    Verdict(
        "queue_backlog", nodes=("retry_rate_backlog", "retry_queue_spearman"),
        thresholds=("retry_rate", "retry_queue_spearman", "queue_p95_ms", "queue_share"),
        present=(("queue_p95",), ("queue_share",)), bucket="t_queue", parts=("t_queue",), pages=QUEUE,
        fixes=(
            fix("Verify that in_flight stays near cap while the queue is non-zero; if it does, the backlog is a cap or "
                "an arrival spike: add capacity or raise the cap", ("002", TRIAGE)),
            fix("Shorten batch wait windows and give interactive traffic its own lane, apart from long and heavy "
                "requests", ("000", B4)),
            fix("Enforce queue rejection before delay becomes meaningless: shed load with a degraded-mode response "
                "instead of unbounded waits", ("000", B4), ("004", "Capacity, queues, and backpressure")),
            fix("Turn on continuous batching and autoscale on queue depth", ("001", PLAYBOOK)),
        )),
    # An admission gap or a retry storm is a backlog by construction (implies), and takes t_queue's growth in an
    # incident when its compared nodes say yes (queue_nodes; admission_gap is asked first).
    Verdict(
        "admission_gap", nodes=("idle_slots",), thresholds=("gap_fraction", "queue_p95_ms", "queue_share"),
        present=(("queue_p95", "idle_slots"), ("queue_share", "idle_slots")), implies=("queue_backlog",),
        bucket="t_queue", queue_nodes=("idle_slots",), pages=QUEUE[:1],
        fixes=(
            fix("Idle gaps under backlog (queue > 0 while in_flight < cap) mean the scheduler, networking or CPU "
                "parsing path is stalling: look there before adding capacity", ("002", SIGNATURES)),
            fix("Move heavy parsing and validation off the socket-read executor and measure CPU time explicitly",
                ("002", TRIAGE)),
            fix("Track queue depth separately from utilization: empty slots with a deep queue suggest scheduling bugs",
                ("004", "Cold start and warm pools")),
            fix("Check batch formation delay and shorten batch wait windows", ("000", B4)),
        )),
    Verdict(
        "retry_amplification", nodes=("retry_queue_spearman", "retry_rate"),
        thresholds=("retry_queue_spearman", "retry_rate"), present=(("retry_rate",),), implies=("queue_backlog",),
        parts=("t_retry",), queue_nodes=("retry_rate_backlog", "retry_queue_spearman"),
        pages=(("runs", {"retried": "1"}),),
        fixes=(
            fix("Fix retry budgets and timeouts before adjusting concurrency", ("002", TRIAGE)),
            fix("Timeouts and retries add load, which increases queueing, which creates more timeouts: cap retries "
                "per run and back off", ("002", "Common failure modes")),
            fix("Set explicit timeouts on every network hop and propagate cancellation to free slots",
                ("004", "Timeouts and cancellation")),
            fix("Circuit breakers around flaky tools; fall back to a cached or simpler path",
                ("003", "Fix 10: Tail mitigation")),
            fix("Fail fast on budget overruns: return a partial answer with a fallback instead of spinning",
                ("003", "Fix 1: Set a hard budget and enforce it in code")),
        )),
]
