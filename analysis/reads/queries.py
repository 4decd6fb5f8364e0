"""Read queries of the analysis app over request_buckets; one function per .sql file of the same name.

Every query covers one project's service and the attempts queued in [start, end) (naive datetimes
are UTC). Durations are milliseconds. Where a value is undefined (no rows, one value for a
stddev) it is None, never 0.
"""
import math
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis import buckets

from analysis.rollups import aggregates
from analysis.evidence_types import OTHERS
from analysis.stats import finite
from analysis.windows import utc_naive
from store import client

from analysis.sql_files import sql as _sql
# what a distribution may be grouped by (sql/_dimension_value.sql)
DIMENSIONS = ("route", "tenant")
# the percentiles a budget may be measured at
PERCENTILES = (50, 90, 95, 99)
UINT32_MAX = 2**32 - 1  # a {limit:UInt32} that keeps everything
MINUTE_MS = 60_000
# Windows at least this long read their whole aggregated hours' distributions and series from sketches (bucket_hours,
# bucket_minutes, tenant_hours: analysis/rollups/aggregates.py; a quantile is within 0.2 % of a value near its rank, counts and
# means exact); shorter ones, and any tenant filter, read every attempt and their quantiles are exact.
SKETCH_AFTER = timedelta(hours=6)
# ... and hold at least this many attempts in their core: below it reading every attempt is cheap, and a sketch's
# quantile (a value near the rank) is further from the exact one (interpolated between ranks) when values are few.
SKETCH_MIN_ATTEMPTS = 50_000


def _params(project_id, service, start, end, route="", tenant="", **more) -> dict:
    return {"project_id": project_id, "service": service, "start": utc_naive(start), "end": utc_naive(end),
            "route": route, "tenant": tenant, **more}


def _stats(row: dict, name: str, levels=("p50", "p95", "p99")) -> dict:
    """{"p50", "p95", "p99", "mean", "count"} of one bucket from its *_q / *_mean / *_count columns."""
    count = int(row[f"{name}_count"])
    quantiles = row[f"{name}_q"]
    out = {level: (finite(q) if count else None) for level, q in zip(levels, quantiles)}
    if f"{name}_mean" in row:
        out["mean"] = finite(row[f"{name}_mean"]) if count else None
    out["count"] = count
    return out


def _buckets(row: dict) -> dict:
    return {name: _stats(row, name) for name in buckets.ALL}


def _counted(project_id, start, end, tenant) -> aggregates.Split:
    """How an exact count over the window reads: its aggregated core from the hourly tables (kept per route, not
    per tenant) and its edges from request_buckets; a tenant filter reads the whole window from request_buckets."""
    return aggregates.whole(start, end) if tenant else aggregates.split(project_id, start, end)


def _sketched(name: str, project_id, service, start, end, route, tenant, sketchable=True, cover="sketched",
              **more) -> tuple[str, dict]:
    """The query `name` and its parameters, or its _sketch variant over the window's aggregated core and edges
    when `sketchable` (the caller's own conditions) and the window is at least SKETCH_AFTER long, has a core of at
    least SKETCH_MIN_ATTEMPTS and no tenant filter, and the sketches the variant reads (`cover`: a column of
    core_attempts.sql) hold every attempt of that core. Reads nothing when the answer is `name` before it has to."""
    params = _params(project_id, service, start, end, route, tenant, **more)
    if not sketchable or tenant or end - start < SKETCH_AFTER:
        return name, params
    cut = aggregates.split(project_id, start, end)
    if cut.core_start == cut.core_end:
        return name, params
    [row] = aggregates.remembered(
        ("core_attempts", project_id, service, route, cut.core_start, cut.core_end),
        lambda: client.query(_sql("core_attempts"), parameters={
            **params, **cut.params, "edges": list(settings.ANALYSIS_SEGMENT_EDGES)}))
    if (row["counted"] or 0) < SKETCH_MIN_ATTEMPTS or row[cover] != row["counted"]:
        return name, params
    return f"{name}_sketch", {**params, **cut.params}


def bucket_distribution(project_id, service, start, end, route="", tenant="") -> dict:
    """{"requests": attempts, "buckets": {bucket: {"p50", "p95", "p99", "mean", "count"}}} in ms.

    Quantiles are exact (linear interpolation between closest ranks), or sketched for windows past SKETCH_AFTER
    (within 0.2 % of a value near the rank). t_retry is over runs (final attempts). A bucket with no known value
    has count 0 and None elsewhere.
    """
    name, params = _sketched("bucket_distribution", project_id, service, start, end, route, tenant)
    [row] = client.query(_sql(name), parameters=params)
    return {"requests": int(row["requests"]), "buckets": _buckets(row)}


def bucket_distribution_by_dimension(project_id, service, start, end, dimension, route="", tenant="") -> list[dict]:
    """[{"value", "requests", "buckets"}] per value of `dimension` (one of DIMENSIONS), most requests first."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}, got {dimension!r}")
    rows = client.query(_sql("bucket_distribution_by_dimension"),
                        parameters=_params(project_id, service, start, end, route, tenant, dimension=dimension))
    return [{"value": r["value"], "requests": int(r["requests"]), "buckets": _buckets(r)} for r in rows]


def bucket_distribution_top_values(project_id, service, start, end, dimension, limit: int, route="",
                                   tenant="") -> list[dict]:
    """bucket_distribution_by_dimension for the `limit` values with the most attempts, then one row named
    evidence_types.OTHERS pooling every other value's attempts, with "others": how many values it holds (None on
    every other row); no such row when nothing is left over."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}, got {dimension!r}")
    # the sketches are kept per route, not per tenant
    name, params = _sketched("bucket_distribution_top_values", project_id, service, start, end, route, tenant,
                             sketchable=dimension == "route", dimension=dimension, limit=limit)
    rows = client.query(_sql(name), parameters=params)
    return [{"value": r["value"] if r["is_top"] else OTHERS, "requests": int(r["requests"]), "buckets": _buckets(r),
             "others": None if r["is_top"] else int(r["folded"])} for r in rows]


def segment_labels(edges) -> list[str]:
    """Labels of the segments cut by `edges` (tokens): (1000, 4000, 16000) -> <1k, 1-4k, 4-16k, >16k."""
    def short(n):
        return f"{n // 1000}k" if n % 1000 == 0 else str(n)
    labels = [f"<{short(edges[0])}"] if edges else ["all"]
    for lo, hi in zip(edges, edges[1:]):
        low = short(lo)[:-1] if short(lo).endswith("k") and short(hi).endswith("k") else short(lo)
        labels.append(f"{low}-{short(hi)}")
    if edges:
        labels.append(f">{short(edges[-1])}")
    return labels


def bucket_distribution_by_segment(project_id, service, start, end, edges=(1000, 4000, 16000), route="",
                                   tenant="") -> list[dict]:
    """[{"segment": label, "requests", "buckets"}] per prompt-length segment (input_tokens cut at
    `edges`, ascending), in segment order; attempts without input_tokens are the "unknown" segment.
    Segments without attempts are absent."""
    labels = segment_labels(list(edges))
    # segment_hours is cut at the configured edges only
    name, params = _sketched("bucket_distribution_by_segment", project_id, service, start, end, route, tenant,
                             sketchable=list(edges) == list(settings.ANALYSIS_SEGMENT_EDGES), cover="segmented",
                             edges=list(edges))
    rows = client.query(_sql(name), parameters=params)
    return [{"segment": labels[r["segment"]] if r["segment"] >= 0 else "unknown", "requests": int(r["requests"]),
             "buckets": _buckets(r)} for r in rows]


def request_shares(project_id, service, start, end, route="", tenant="") -> dict:
    """Medians over successful attempts of per-request shares (0..1) and decode speed; see the SQL.

    Keys: shared (attempts with total_ms > 0), <bucket>_share, first_token_n, prep_n / prep_share,
    network_n / network_share, retrieval_n / retrieval_q [p50, p95] ms, tool_n / tool_q, post_stage_n /
    post_stage_share, decode_n / ms_per_output_token_q [p50, p95]. Empty aggregates come back None.
    """
    name, params = _sketched("request_shares", project_id, service, start, end, route, tenant)
    [row] = client.query(_sql(name), parameters=params)
    return {k: (int(v) if k.endswith("_n") or k == "shared" else [finite(x) for x in v] if isinstance(v, list)
                else finite(v)) for k, v in row.items()}


def scheduler_sweep(project_id, service, start, end, bucket_ms: int, limit: int | None = None) -> dict:
    """The +1/-1 sweep of docs/span-convention.md's scheduler state, over the whole service (no route/tenant; every
    service of the project as one for service '').

    {"instances": [{"instance", "bucket_start" (aware UTC), "cap" (None: unknown), "backlog_ms",
    "capped_backlog_ms" (backlog_ms when the instance reported a cap in the window, else 0), "uncapped_backlog_ms"
    (backlog_ms while its cap was still unknown), "gap_ms", "queue_ms", "in_flight_ms" (count x ms), "covered_ms",
    "queue_max", "in_flight_max", "others"}] per instance and bucket of `bucket_ms` (epoch-aligned; each step is
    split at bucket edges, so queue_ms / covered_ms is the time-weighted mean queue_depth), in instance and time
    order, "tenants": [{"tenant", "in_flight_backlog_ms" (slot x ms held while the instance had a queue),
    "attempts", "others"}], largest first}.

    With `limit`, only the `limit` instances with the most backlog (then in-flight time) and the `limit` tenants
    with the most slot time keep rows of their own; the rest are pooled (per bucket for instances) in rows named
    evidence_types.OTHERS whose "others" says how many they hold (None on every other row), which come last.
    """
    return scheduler_sweeps(project_id, [service] if service else [], start, end, bucket_ms, limit)[service]


def scheduler_sweeps(project_id, services: list[str], start, end, bucket_ms: int, limit: int | None = None) -> dict:
    """scheduler_sweep of each of `services` from one read (analysis/reads/sweeps.py): service -> its sweep. An empty
    list: every service of the project as one, under ''."""
    # the stored minutes serve buckets of whole minutes; finer ones are swept from attempts over the whole window
    cut = aggregates.split(project_id, start, end) if bucket_ms % MINUTE_MS == 0 else aggregates.whole(start, end)
    params = {**_params(project_id, "", start, end, bucket_ms=bucket_ms, services=list(services),
                        limit=UINT32_MAX if limit is None else limit), **cut.params}
    out = {service: {"instances": [], "tenants": []} for service in services or [""]}
    # a window that is all core (whole aggregated hours) reads its stored minutes alone
    name = "scheduler_sweep_core" if (cut.core_start, cut.core_end) == (cut.start, cut.end) else "scheduler_sweep"
    for r in client.query(_sql(name), parameters=params):
        others = int(r["folded"]) if r["is_others"] else None
        sweep = out[r["service"]]
        if r["is_instance_row"]:
            sweep["instances"].append({
                "instance": OTHERS if others is not None else r["instance_name"], "cap": r["cap"],
                "bucket_start": datetime.fromtimestamp(r["bucket_start_ms"] / 1000, tz=timezone.utc),
                "backlog_ms": r["backlog_ms_sum"], "capped_backlog_ms": r["capped_backlog_ms"],
                "uncapped_backlog_ms": r["uncapped_backlog_ms"], "gap_ms": r["gap_ms_sum"], "queue_ms": r["queue_ms_sum"],
                "in_flight_ms": r["in_flight_ms_sum"], "covered_ms": r["covered_ms_sum"], "queue_max": r["queue_max_all"],
                "in_flight_max": r["in_flight_max_all"], "others": others})
        else:
            sweep["tenants"].append({"tenant": OTHERS if others is not None else r["tenant_name"],
                                     "in_flight_backlog_ms": r["in_flight_backlog_ms_sum"],
                                     "attempts": int(r["attempts_sum"]), "others": others})
    return out


def churn_windows(project_id, service, start, end, route="", tenant="") -> list[dict]:
    """Per minute of queued_at: {"minute", "attempts", "new_connections", "retries", "successes",
    "t_first_token_p95", "t_first_token_stddev", "ttft_p95", "ttft_stddev"} (ms; None when undefined). Exact: the
    window's aggregated core reads its minutes from churn_minutes."""
    cut = _counted(project_id, start, end, tenant)
    name = "churn_windows_attempts" if cut.core_start == cut.core_end else "churn_windows"
    rows = client.query(_sql(name), parameters={**_params(project_id, service, start, end, route, tenant), **cut.params})
    for r in rows:
        r["minute"] = r["minute"].replace(tzinfo=timezone.utc)
        for key in ("t_first_token_p95", "t_first_token_stddev", "ttft_p95", "ttft_stddev"):
            r[key] = finite(r[key]) if r["attempts"] else None
    return rows


def tenant_tails(project_id, service, start, end, route="") -> list[dict]:
    """[{"tenant", "requests", "total": {p95, p99, count}, "ttft": ..., "t_queue": ...}], most requests first."""
    rows = client.query(_sql("tenant_tails"), parameters=_params(project_id, service, start, end, route))
    return [{"tenant": r["tenant"], "requests": int(r["requests"]),
             **{b: _stats(r, b, ("p95", "p99")) for b in ("total", "ttft", "t_queue")}} for r in rows]


def tenant_tails_top(project_id, service, start, end, limit: int, route="", keep=(), min_count=0, ttft_p95_ms=None,
                     total_p95_ms=None) -> list[dict]:
    """tenant_tails for at most `limit` tenants, most requests first, then one row named evidence_types.OTHERS
    pooling every other tenant's attempts (its tails are over their attempts together), with "others": how many
    tenants it holds (None on every other row); no such row when nothing is left over.

    Kept first are the tenants in `keep`, then those with at least min_count attempts whose TTFT p95 >= ttft_p95_ms
    or total p95 >= total_p95_ms (ms; None: no such test), the outliers the diagnosis looks for; then the busiest.
    Windows past SKETCH_AFTER read the sketches (tenant_hours): quantiles within 0.2 % of a value near the rank."""
    floor = {"ttft_p95_ms": ttft_p95_ms, "total_p95_ms": total_p95_ms}
    name, params = _sketched("tenant_tails_top", project_id, service, start, end, route, "", limit=limit,
                             keep=list(keep), min_count=min_count,
                             **{k: math.inf if v is None else v for k, v in floor.items()})
    rows = client.query(_sql(name), parameters=params)
    return [{"tenant": r["tenant_or_others"] if r["is_top"] else OTHERS, "requests": int(r["requests"]),
             **{b: _stats(r, b, ("p95", "p99")) for b in ("total", "ttft", "t_queue")},
             "others": None if r["is_top"] else int(r["folded"])} for r in rows]


def retry_summary(project_id, service, start, end, route="", tenant="") -> dict:
    """{"runs", "known_runs", "successful_runs", "runs_with_retries", "extra_attempts", "attempts", "failed_attempts",
    "wasted_input_tokens", "wasted_output_tokens", "causes": {cause: failed attempts}}; runs_with_retries and
    extra_attempts are over known_runs (runs whose spans say which attempts belong together)."""
    [row] = client.query(_sql("retry_summary"), parameters={
        **_params(project_id, service, start, end, route, tenant), **_counted(project_id, start, end, tenant).params})
    keys, counts = row.pop("causes")
    return {**{k: int(v) for k, v in row.items()}, "causes": dict(zip(keys, map(int, counts)))}


def successful_runs_per_hour(project_id, service, start, end, route="", tenant="") -> list[tuple[datetime, int]]:
    """(hour start, aware UTC; successful runs) for each hour of [start, end) that had any."""
    rows = client.query_rows(_sql("successful_runs_per_hour"),
                             parameters=_params(project_id, service, start, end, route, tenant))
    return [(hour.replace(tzinfo=timezone.utc), int(n)) for hour, n in rows]


def active_services(start, end) -> list[tuple[int, str]]:
    """(project_id, service) pairs with attempts queued in [start, end), across projects."""
    rows = client.query_rows(_sql("active_services"), parameters={"start": utc_naive(start), "end": utc_naive(end)})
    return [(int(p), s) for p, s in rows]


def others_t_queue(project_id, service, start, end, tenants: list[str]) -> dict[str, float | None]:
    """tenant -> p95 of t_queue_ms over the other tenants' attempts (None when they have none); sketched (within
    0.2 % of a value near the rank) for windows past SKETCH_AFTER."""
    if not tenants:
        return {}
    name, params = _sketched("others_t_queue", project_id, service, start, end, "", "", tenants=list(tenants))
    rows = client.query(_sql(name), parameters=params)
    found = {r["tenant"]: finite(r["others_t_queue_p95"]) if r["others_count"] else None for r in rows}
    return {t: found.get(t) for t in tenants}


def bucket_quantile(project_id, service, start, end, bucket, quantile, group="", route="") -> dict:
    """{group value: (quantile of `bucket` in ms or None when no attempt has it, attempts)} per group.

    `bucket`: a name of analysis.buckets.ALL (ValueError otherwise). `group`: route, tenant, or anything else
    for the whole service (one group ""). `quantile` is 0..1, exact (linear interpolation between closest
    ranks, as bucket_distribution). No attempts: {}.
    """
    buckets.column(bucket)  # the allow-list: ValueError for an unknown name
    dimension = group if group in DIMENSIONS else ""
    rows = client.query(_sql("bucket_quantile"), parameters=_params(
        project_id, service, start, end, route, dimension=dimension, bucket=bucket, quantile=quantile))
    return {r["grp"]: (finite(r["value"]) if r["n"] else None, int(r["requests"])) for r in rows}


def stage_percentiles(project_id, service, start, end, percentile=95, route="") -> dict:
    """{"requests": attempts, "total" | stage code: {"value": ms or None, "count": requests with a value}}
    for the attempts of one service (and route, "" = all) queued in [start, end). The stage codes are the
    <code>_q aliases of sql/stage_percentiles.sql (budgets/stages.py names them); percentile: one of PERCENTILES."""
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {PERCENTILES}, got {percentile!r}")
    [row] = client.query(_sql("stage_percentiles"),
                         parameters=_params(project_id, service, start, end, route, level=percentile / 100))
    out = {"requests": int(row["requests"])}
    for code in (key[:-2] for key in row if key.endswith("_q")):
        count = int(row[f"{code}_n"])
        out[code] = {"value": finite(row[f"{code}_q"]) if count else None, "count": count}
    return out


def overview_series(project_id, service, start, end, width_ms: int, route="", tenant="") -> list[dict]:
    """[{"at" (aware UTC), "requests", "errors", "ttft": {p50, p95, p99}, "total": {...}}] per time bucket of
    `width_ms` (epoch-aligned) that has attempts; the quantiles are over successful attempts, None without any (from
    the sketches for windows past SKETCH_AFTER in buckets of whole minutes)."""
    # the sketches are per minute, and per five minutes over every route (overview_five_minutes)
    name, params = _sketched("overview_series", project_id, service, start, end, route, tenant,
                             sketchable=width_ms % MINUTE_MS == 0, width_ms=width_ms,
                             five=int(width_ms % (5 * MINUTE_MS) == 0))
    rows = client.query(_sql(name), parameters=params)
    out = []
    for r in rows:
        point = {"at": datetime.fromtimestamp(r["bucket_ms"] / 1000, tz=timezone.utc),
                 "requests": int(r["requests"]), "errors": int(r["errors"])}
        for name in ("ttft", "total"):
            known = r[f"{name}_count"] > 0
            point[name] = {level: finite(q) if known else None for level, q in zip(("p50", "p95", "p99"), r[f"{name}_q"])}
        out.append(point)
    return out


def stage_sums(project_id, service, start, end, route="", tenant="") -> dict:
    """Sums for an additive decomposition of mean latency (ms): {"attempts", "runs", "<bucket>_sum" per
    analysis.buckets.PARTS (known values; t_retry over final attempts), "prep_sum", "network_sum",
    "new_first_token_n" / "_sum" (attempts on a new connection), "reused_first_token_n" / "_sum", "decode_stream_sum"
    and "decode_tokens_sum" (t_stream and output_tokens - 1 over attempts with > 1 output token)}. No attempts: 0s."""
    [row] = client.query(_sql("stage_sums"), parameters=_params(project_id, service, start, end, route, tenant))
    return {k: (int(v) if k in ("attempts", "runs") or k.endswith("_n") else float(v or 0)) for k, v in row.items()}


def layer_stage_sums(project_id, service, start, end) -> list[dict]:
    """Per engine service `service`'s calls queued in [start, end) reached, most calls first: {"engine_service",
    "links", "t_gateway_sum", "t_network_total_sum", "call_<part>_sum" (the calls' own t_queue, t_conn,
    t_first_token, t_stream, t_post, prep, network), and stage_sums' keys of the engine attempts ("attempts" = links)}
    (ms, unknown values add nothing; sql/layer_stage_sums.sql). [] for a service with no call seen at two layers."""
    rows = client.query(_sql("layer_stage_sums"), parameters=_params(project_id, service, start, end))
    return [{k: (v if k == "engine_service" else int(v) if k == "links" or k.endswith("_n") else float(v or 0))
             for k, v in r.items()} | {"attempts": int(r["links"])} for r in rows]


def layer_series_of(project_id, services: list[str], start, end) -> dict[str, dict[datetime, dict]]:
    """service -> {minute (aware UTC): {"p50", "p95", "count"}} of t_gateway over its calls seen at two layers and
    queued in [start, end) (sql/layer_series.sql); a service without such calls is absent."""
    params = {**_params(project_id, "", start, end), "services": list(services)}
    out: dict[str, dict[datetime, dict]] = {}
    for r in client.query(_sql("layer_series"), parameters=params):
        p50, p95 = r["t_gateway_q"]
        known = int(r["t_gateway_count"])
        out.setdefault(r["service"], {})[r["minute"].replace(tzinfo=timezone.utc)] = (
            {"p50": p50 if math.isfinite(p50) else None, "p95": p95 if math.isfinite(p95) else None, "count": known}
            if known else {"p50": None, "p95": None, "count": 0})
    return out


def scope_excess(project_id, service, start, end, baseline_start, baseline_end, bucket: str, baseline_mean_ms: float,
                 edges, limit: int, min_count: int, route="", tenant="") -> list[dict]:
    """The excess of `bucket` (a name of analysis.buckets.ALL; ValueError otherwise; means in ms) per dimension
    (route, tenant, instance, model, segment) and value: {"dimension", "value", "incident_attempts", "incident_mean_ms"
    (None without a known value), "baseline_attempts", "baseline_mean_ms" (None), "excess_ms", "positive_excess_ms",
    "others"} over the attempts queued in [start, end) vs [baseline_start, baseline_end); see sql/scope_excess.sql.

    Segment values are the labels of segment_labels(edges) ("unknown" without input_tokens). Per dimension the
    `limit` values with the largest excess come first, then one row named evidence_types.OTHERS pooling the rest,
    with "others": how many values it holds (None on every other row)."""
    buckets.column(bucket)  # the allow-list: ValueError for an unknown name
    labels = segment_labels(list(edges))
    rows = client.query(_sql("scope_excess"), parameters=_params(
        project_id, service, start, end, route, tenant, bucket=bucket, baseline_start=utc_naive(baseline_start),
        baseline_end=utc_naive(baseline_end), baseline_mean_ms=baseline_mean_ms, edges=list(edges), limit=limit,
        min_count=min_count))
    out = []
    for r in rows:
        value = r["value_or_pool"] if r["is_top"] else OTHERS
        if r["is_top"] and r["dimension"] == "segment":
            value = "unknown" if value == "-1" else labels[int(value)]
        out.append({"dimension": r["dimension"], "value": value, "incident_attempts": int(r["incident_attempts"]),
                    "incident_mean_ms": _mean(r["incident_ms"], r["incident_known_total"]),
                    "baseline_attempts": int(r["baseline_known_total"]),
                    "baseline_mean_ms": _mean(r["baseline_ms"], r["baseline_known_total"]),
                    "excess_ms": float(r["excess_total_ms"]), "positive_excess_ms": float(r["positive_excess_ms"]),
                    "others": None if r["is_top"] else int(r["folded"])})
    return out


def scope_excess_layers(project_id, service, start, end, baseline_start, baseline_end, limit: int,
                        min_count: int) -> list[dict]:
    """scope_excess's rows for the engines below a gateway (dimensions engine and engine_instance), from its calls
    seen at two layers: the excess of the call's total (sql/scope_excess_layers.sql); [] for a service that calls
    no traced engine."""
    rows = client.query(_sql("scope_excess_layers"), parameters=_params(
        project_id, service, start, end, baseline_start=utc_naive(baseline_start),
        baseline_end=utc_naive(baseline_end), limit=limit, min_count=min_count))
    return [{"dimension": r["dimension"], "value": r["value_or_pool"] if r["is_top"] else OTHERS,
             "incident_attempts": int(r["incident_attempts"]),
             "incident_mean_ms": _mean(r["incident_ms"], r["incident_known_total"]),
             "baseline_attempts": int(r["baseline_known_total"]),
             "baseline_mean_ms": _mean(r["baseline_ms"], r["baseline_known_total"]),
             "excess_ms": float(r["excess_total_ms"]), "positive_excess_ms": float(r["positive_excess_ms"]),
             "others": None if r["is_top"] else int(r["folded"])} for r in rows]


def _mean(total, count) -> float | None:
    return float(total) / int(count) if count else None


def incident_series(project_id, service, start, end, route="", tenant="", exact=False, instance="") -> list[dict]:
    """[{"at" (aware UTC minute), "attempts", "errors", bucket: {"p50", "p95", "count"} per analysis.buckets.ALL}]
    per minute of queued_at in [start, end) that has attempts, oldest first. A bucket with no known value in a
    minute has count 0 and None quantiles (not measured, never 0). Each hour's current rows: counts are logical. Windows
    past SKETCH_AFTER read the sketches unless `exact` (incident detection: its thresholds
    judge single minutes, whose few values a sketch's rank can miss by more) or one instance's (no sketch per
    instance and minute)."""
    name, params = _sketched("incident_series", project_id, service, start, end, route, tenant,
                             sketchable=not exact and not instance, instance=instance)
    return _series_points(client.query_columns(_sql(name), parameters=params))


def incident_series_slices(project_id, service, start, end, min_attempts: int, min_minutes: int,
                           max_slices: int) -> dict[tuple[str, str], list[dict]]:
    """incident_series (exact) of the whole service under ("", "") and, under ("route" | "tenant" | "instance",
    name), of each slice worth judging on its own, from one read: of a dimension with two named values or more, with
    min_minutes minutes of min_attempts attempts, among the max_slices busiest of its dimension. The window's
    aggregated core reads its minutes from incident_minutes, written when its hours settled."""
    return incident_series_slices_of(project_id, [service], start, end, min_attempts, min_minutes,
                                     max_slices)[service]


def incident_series_slices_of(project_id, services: list[str], start, end, min_attempts: int, min_minutes: int,
                              max_slices: int) -> dict[str, dict[tuple[str, str], list[dict]]]:
    """incident_series_slices of each of these services, from one read: service -> its series (("", "") always,
    empty without attempts). The incidents step reads its services so, a read's planning being ~1/5 of its time."""
    out: dict[str, dict[tuple[str, str], list[dict]]] = {service: {("", ""): []} for service in services}
    params = {**_params(project_id, "", start, end, min_attempts=min_attempts, min_minutes=min_minutes,
                        max_slices=max_slices, services=list(services)),
              **aggregates.split(project_id, start, end).params}
    columns = client.query_columns(_sql("incident_series_slices"), parameters=params)
    if not columns:  # no rows
        return out
    for service, dimension, value, point in zip(columns["service"], columns["dimension"], columns["value"],
                                                _series_points(columns)):
        out[service].setdefault((dimension, value), []).append(point)
    return out


_SERIES_KEYS = [(name, f"{name}_q", f"{name}_count") for name in buckets.ALL]


def _series_points(columns: dict[str, list]) -> list[dict]:
    """The points of a series read's columns, in row order. _stats' shape, written out and built column by column
    (the incidents step turns ~75,000 rows a minute into points: a dict per row first cost a fifth of that)."""
    if not columns:
        return []
    points = [{"at": minute.replace(tzinfo=timezone.utc), "attempts": int(attempts), "errors": int(errors)}
              for minute, attempts, errors in zip(columns["minute"], columns["attempts"], columns["errors"])]
    finite, unknown = math.isfinite, {"p50": None, "p95": None, "count": 0}
    for name, quantiles, known in _SERIES_KEYS:
        for point, (p50, p95), count in zip(points, columns[quantiles], columns[known]):
            point[name] = ({"p50": p50 if finite(p50) else None, "p95": p95 if finite(p95) else None,
                            "count": int(count)} if count else dict(unknown))
    return points


def project_services(project_id, start, end) -> list[str]:
    """The services of one project with attempts queued in [start, end), by name."""
    rows = client.query_rows(_sql("project_services"), parameters={
        **_params(project_id, "", start, end), **aggregates.split(project_id, start, end).params})
    return [service for (service,) in rows]


def coverage_counts(project_id, service, start, end, route="", tenant="") -> list[dict]:
    """Per span form (most attempts first): "form", "attempts", "runs" (final attempts), "successes" (attempts
    not 'error'), and per bucket and signal of analysis.reads.coverage the number of those with a known value. Empty
    without attempts."""
    rows = client.query(_sql("coverage_counts"), parameters={
        **_params(project_id, service, start, end, route, tenant), **_counted(project_id, start, end, tenant).params})
    return [{k: (v if k == "form" else int(v)) for k, v in r.items()} for r in rows]


def instance_starts(project_id, service, start, end, floor_ms, minutes: int, process_starts=()) -> dict:
    """{"starts": [[instance, ISO start]], "share": TTFT outliers (> floor_ms) in the `minutes` after an instance
    started, over all outliers (None without outliers or a floor)}. An instance starts at its first attempt when
    the service was already serving, or at a process start the engine's metrics report (`process_starts`)."""
    if floor_ms is None:
        return {"starts": [], "share": None}
    params = _params(project_id, service, start, end)
    # an instance starts at its first attempt when that is in the window and a minute or more after the service's first
    firsts = {i: utc_naive(t) for i, t in client.query_rows(_sql("instance_firsts"), parameters=params)}
    began = min(firsts.values(), default=None)
    started = {i: t for i, t in firsts.items() if t >= params["start"] and t >= began + timedelta(minutes=1)}
    for instance, at in process_starts:  # or at a process start the engine's metrics reported
        at = utc_naive(datetime.fromisoformat(at))
        started[instance] = min(started.get(instance, at), at)
    ordered = sorted(started.items(), key=lambda item: (item[1], item[0]))
    [row] = client.query(_sql("instance_start_outliers"), parameters={
        **params, "floor": float(floor_ms), "minutes": minutes,
        "instances": [i for i, _ in ordered], "starts": [t for _, t in ordered]})
    starts = [[i, t.replace(tzinfo=timezone.utc).isoformat()] for i, t in ordered]
    share = row["after"] / row["outliers"] if row["outliers"] else None
    return {"starts": starts, "share": share if starts else (0.0 if row["outliers"] else None)}
