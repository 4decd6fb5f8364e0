"""The names of the time buckets, defined once (README "What it measures"; seed texts' words verbatim).

Each is also a column `<name>_ms` of request_buckets; ttft and total are derived from the instants.
"""
# the lifecycle buckets of one attempt, in the order of the request path (stacked charts use this order)
STAGES = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post")
# the buckets of request time: the lifecycle plus t_retry, which only the final attempt of a run has
PARTS = STAGES + ("t_retry",)
# every measure a distribution, budget or alert may ask for
ALL = PARTS + ("ttft", "total")


def column(name: str) -> str:
    """The request_buckets column of a bucket; ValueError for a name not in ALL (the allow-list of identifiers)."""
    if name not in ALL:
        raise ValueError(f"unknown bucket {name!r}: one of {', '.join(ALL)}")
    return f"{name}_ms"
