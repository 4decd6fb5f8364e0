"""Read queries of the analysis app over request_buckets; one function per .sql file of the same name.

Every query takes a Scope (analysis/scope.py): the attempts of one project's service queued in [start, end), of
its route and tenant when set; the Scope decides whether the query reads the exact rows or the sketches. Durations
are milliseconds. Where a value is undefined (no rows, one value for a stddev) it is None, never 0.
"""
import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis import buckets
from analysis.evidence_types import OTHERS
from analysis.rollups import aggregates
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from analysis.stats import finite
from analysis.windows import utc_naive
from store import client

# what a distribution may be grouped by (sql/_dimension_value.sql)
DIMENSIONS = ("route", "tenant")
# the percentiles a budget may be measured at
PERCENTILES = (50, 90, 95, 99)
UINT32_MAX = 2**32 - 1  # a {limit:UInt32} that keeps everything
MINUTE_MS = 60_000

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


def bucket_distribution(scope: Scope) -> dict:
    """{"requests": attempts, "buckets": {bucket: {"p50", "p95", "p99", "mean", "count"}}} in ms.

    Quantiles are exact (linear interpolation between closest ranks), or sketched for long windows (within 0.2 % of
    a value near the rank: Scope.sketches). t_retry is over runs (final attempts). A bucket with no known value has
    count 0 and None elsewhere.
    """
    name, params = scope.sketched("bucket_distribution")
    [row] = client.query(_sql(name), parameters=params)
    return {"requests": int(row["requests"]), "buckets": _buckets(row)}


def bucket_distribution_by_dimension(scope: Scope, dimension) -> list[dict]:
    """[{"value", "requests", "buckets"}] per value of `dimension` (one of DIMENSIONS), most requests first."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}, got {dimension!r}")
    rows = client.query(_sql("bucket_distribution_by_dimension"),
                        parameters=scope.params(dimension=dimension))
    return [{"value": r["value"], "requests": int(r["requests"]), "buckets": _buckets(r)} for r in rows]


def bucket_distribution_top_values(scope: Scope, dimension, limit: int) -> list[dict]:
    """bucket_distribution_by_dimension for the `limit` values with the most attempts, then one row named
    evidence_types.OTHERS pooling every other value's attempts, with "others": how many values it holds (None on
    every other row); no such row when nothing is left over."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}, got {dimension!r}")
    # the sketches are kept per route, not per tenant
    name, params = scope.sketched("bucket_distribution_top_values", sketchable=dimension == "route",
                                  dimension=dimension, limit=limit)
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


def bucket_distribution_by_segment(scope: Scope, edges=(1000, 4000, 16000)) -> list[dict]:
    """[{"segment": label, "requests", "buckets"}] per prompt-length segment (input_tokens cut at
    `edges`, ascending), in segment order; attempts without input_tokens are the "unknown" segment.
    Segments without attempts are absent."""
    labels = segment_labels(list(edges))
    # segment_hours is cut at the configured edges only
    name, params = scope.sketched("bucket_distribution_by_segment",
                                  sketchable=list(edges) == list(settings.ANALYSIS_SEGMENT_EDGES), cover="segmented",
                                  edges=list(edges))
    rows = client.query(_sql(name), parameters=params)
    return [{"segment": labels[r["segment"]] if r["segment"] >= 0 else "unknown", "requests": int(r["requests"]),
             "buckets": _buckets(r)} for r in rows]


def request_shares(scope: Scope) -> dict:
    """Medians over successful attempts of per-request shares (0..1) and decode speed; see the SQL.

    Keys: shared (attempts with total_ms > 0), <bucket>_share, first_token_n, prep_n / prep_share,
    network_n / network_share, retrieval_n / retrieval_q [p50, p95] ms, tool_n / tool_q, post_stage_n /
    post_stage_share, decode_n / ms_per_output_token_q [p50, p95]. Empty aggregates come back None.
    """
    name, params = scope.sketched("request_shares")
    [row] = client.query(_sql(name), parameters=params)
    return {k: (int(v) if k.endswith("_n") or k == "shared" else [finite(x) for x in v] if isinstance(v, list)
                else finite(v)) for k, v in row.items()}


def scheduler_sweep(scope: Scope, bucket_ms: int, limit: int | None = None) -> dict:
    """The +1/-1 sweep of docs/span-convention.md's scheduler state, over the scope's whole service (its route and
    tenant are not applied: the scheduler's slots and queue are the service's; every service of the project as one
    for service '').

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
    services = [scope.service] if scope.service else []
    return scheduler_sweeps(replace(scope, service=""), services, bucket_ms, limit)[scope.service]


def scheduler_sweeps(scope: Scope, services: list[str], bucket_ms: int, limit: int | None = None) -> dict:
    """scheduler_sweep of each of `services` of the scope's project (the scope's service is not read: "") from one
    read (analysis/reads/sweeps.py): service -> its sweep. An empty list: every service of the project as one,
    under ''."""
    # the stored minutes serve buckets of whole minutes; finer ones are swept from attempts over the whole window
    scope = replace(scope, service="", route="", tenant="")
    cut = scope.split if bucket_ms % MINUTE_MS == 0 else aggregates.whole(scope.start, scope.end)
    params = {**scope.params(bucket_ms=bucket_ms, services=list(services),
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


def churn_windows(scope: Scope) -> list[dict]:
    """Per minute of queued_at: {"minute", "attempts", "new_connections", "retries", "successes",
    "t_first_token_p95", "t_first_token_stddev", "ttft_p95", "ttft_stddev"} (ms; None when undefined). Exact: the
    window's aggregated core reads its minutes from churn_minutes."""
    cut = scope.split
    name = "churn_windows_attempts" if cut.core_start == cut.core_end else "churn_windows"
    rows = client.query(_sql(name), parameters=scope.counted())
    for r in rows:
        r["minute"] = r["minute"].replace(tzinfo=timezone.utc)
        for key in ("t_first_token_p95", "t_first_token_stddev", "ttft_p95", "ttft_stddev"):
            r[key] = finite(r[key]) if r["attempts"] else None
    return rows


def tenant_tails(scope: Scope) -> list[dict]:
    """[{"tenant", "requests", "total": {p95, p99, count}, "ttft": ..., "t_queue": ...}], most requests first, over
    every tenant of the scope (its tenant is not applied)."""
    rows = client.query(_sql("tenant_tails"), parameters=replace(scope, tenant="").params())
    return [{"tenant": r["tenant"], "requests": int(r["requests"]),
             **{b: _stats(r, b, ("p95", "p99")) for b in ("total", "ttft", "t_queue")}} for r in rows]


def tenant_tails_top(scope: Scope, limit: int, keep=(), min_count=0, ttft_p95_ms=None,
                     total_p95_ms=None) -> list[dict]:
    """tenant_tails for at most `limit` tenants, most requests first, then one row named evidence_types.OTHERS
    pooling every other tenant's attempts (its tails are over their attempts together), with "others": how many
    tenants it holds (None on every other row); no such row when nothing is left over.

    Kept first are the tenants in `keep`, then those with at least min_count attempts whose TTFT p95 >= ttft_p95_ms
    or total p95 >= total_p95_ms (ms; None: no such test), the outliers the diagnosis looks for; then the busiest.
    Over every tenant of the scope (its tenant is not applied). Long windows read the sketches (tenant_hours:
    Scope.sketches): quantiles within 0.2 % of a value near the rank."""
    floor = {"ttft_p95_ms": ttft_p95_ms, "total_p95_ms": total_p95_ms}
    name, params = replace(scope, tenant="").sketched(
        "tenant_tails_top", limit=limit, keep=list(keep), min_count=min_count,
        **{k: math.inf if v is None else v for k, v in floor.items()})
    rows = client.query(_sql(name), parameters=params)
    return [{"tenant": r["tenant_or_others"] if r["is_top"] else OTHERS, "requests": int(r["requests"]),
             **{b: _stats(r, b, ("p95", "p99")) for b in ("total", "ttft", "t_queue")},
             "others": None if r["is_top"] else int(r["folded"])} for r in rows]


def retry_summary(scope: Scope) -> dict:
    """{"runs", "known_runs", "successful_runs", "runs_with_retries", "extra_attempts", "attempts", "failed_attempts",
    "wasted_input_tokens", "wasted_output_tokens", "causes": {cause: failed attempts}}; runs_with_retries and
    extra_attempts are over known_runs (runs whose spans say which attempts belong together)."""
    [row] = client.query(_sql("retry_summary"), parameters=scope.counted())
    keys, counts = row.pop("causes")
    return {**{k: int(v) for k, v in row.items()}, "causes": dict(zip(keys, map(int, counts)))}


def successful_runs_per_hour(scope: Scope) -> list[tuple[datetime, int]]:
    """(hour start, aware UTC; successful runs) for each hour of [start, end) that had any."""
    rows = client.query_rows(_sql("successful_runs_per_hour"), parameters=scope.params())
    return [(hour.replace(tzinfo=timezone.utc), int(n)) for hour, n in rows]


def active_services(start, end) -> list[tuple[int, str]]:
    """(project_id, service) pairs with attempts queued in [start, end), across projects."""
    rows = client.query_rows(_sql("active_services"), parameters={"start": utc_naive(start), "end": utc_naive(end)})
    return [(int(p), s) for p, s in rows]


def others_t_queue(scope: Scope, tenants: list[str]) -> dict[str, float | None]:
    """tenant -> p95 of t_queue_ms over the other tenants' attempts of the scope's whole service (its route and
    tenant are not applied; None when they have none); sketched (within 0.2 % of a value near the rank) for long
    windows (Scope.sketches)."""
    if not tenants:
        return {}
    name, params = replace(scope, route="", tenant="").sketched("others_t_queue", tenants=list(tenants))
    rows = client.query(_sql(name), parameters=params)
    found = {r["tenant"]: finite(r["others_t_queue_p95"]) if r["others_count"] else None for r in rows}
    return {t: found.get(t) for t in tenants}


def bucket_quantile(scope: Scope, bucket, quantile, group="") -> dict:
    """{group value: (quantile of `bucket` in ms or None when no attempt has it, attempts)} per group.

    `bucket`: a name of analysis.buckets.ALL (ValueError otherwise). `group`: route, tenant, or anything else
    for the whole service (one group ""). `quantile` is 0..1, exact (linear interpolation between closest
    ranks, as bucket_distribution). Over every tenant of the scope (its tenant is not applied). No attempts: {}.
    """
    buckets.column(bucket)  # the allow-list: ValueError for an unknown name
    dimension = group if group in DIMENSIONS else ""
    rows = client.query(_sql("bucket_quantile"), parameters=replace(scope, tenant="").params(
        dimension=dimension, bucket=bucket, quantile=quantile))
    return {r["grp"]: (finite(r["value"]) if r["n"] else None, int(r["requests"])) for r in rows}


def stage_percentiles(scope: Scope, percentile=95) -> dict:
    """{"requests": attempts, "total" | stage code: {"value": ms or None, "count": requests with a value}}
    for the attempts of the scope (every tenant: its tenant is not applied). The stage codes are the
    <code>_q aliases of sql/stage_percentiles.sql (budgets/stages.py names them); percentile: one of PERCENTILES."""
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {PERCENTILES}, got {percentile!r}")
    [row] = client.query(_sql("stage_percentiles"),
                         parameters=replace(scope, tenant="").params(level=percentile / 100))
    out = {"requests": int(row["requests"])}
    for code in (key[:-2] for key in row if key.endswith("_q")):
        count = int(row[f"{code}_n"])
        out[code] = {"value": finite(row[f"{code}_q"]) if count else None, "count": count}
    return out


def overview_series(scope: Scope, width_ms: int) -> list[dict]:
    """[{"at" (aware UTC), "requests", "errors", "ttft": {p50, p95, p99}, "total": {...}}] per time bucket of
    `width_ms` (epoch-aligned) that has attempts; the quantiles are over successful attempts, None without any (from
    the sketches for long windows (Scope.sketches) in buckets of whole minutes)."""
    # the sketches are per minute, and per five minutes over every route (overview_five_minutes)
    name, params = scope.sketched("overview_series", sketchable=width_ms % MINUTE_MS == 0, width_ms=width_ms,
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


def stage_sums(scope: Scope) -> dict:
    """Sums for an additive decomposition of mean latency (ms): {"attempts", "runs", "<bucket>_sum" per
    analysis.buckets.PARTS (known values; t_retry over final attempts), "prep_sum", "network_sum",
    "new_first_token_n" / "_sum" (attempts on a new connection), "reused_first_token_n" / "_sum", "decode_stream_sum"
    and "decode_tokens_sum" (t_stream and output_tokens - 1 over attempts with > 1 output token)}. No attempts: 0s."""
    [row] = client.query(_sql("stage_sums"), parameters=scope.params())
    return {k: (int(v) if k in ("attempts", "runs") or k.endswith("_n") else float(v or 0)) for k, v in row.items()}


def layer_stage_sums(scope: Scope) -> list[dict]:
    """Per engine service `service`'s calls queued in [start, end) reached, most calls first: {"engine_service",
    "links", "t_gateway_sum", "t_network_total_sum", "call_<part>_sum" (the calls' own t_queue, t_conn,
    t_first_token, t_stream, t_post, prep, network), and stage_sums' keys of the engine attempts ("attempts" = links)}
    (ms, unknown values add nothing; sql/layer_stage_sums.sql; the scope's route and tenant are not applied). [] for
    a service with no call seen at two layers."""
    rows = client.query(_sql("layer_stage_sums"), parameters=replace(scope, route="", tenant="").params())
    return [{k: (v if k == "engine_service" else int(v) if k == "links" or k.endswith("_n") else float(v or 0))
             for k, v in r.items()} | {"attempts": int(r["links"])} for r in rows]


def layer_series_of(scope: Scope, services: list[str]) -> dict[str, dict[datetime, dict]]:
    """service -> {minute (aware UTC): {"p50", "p95", "count"}} of t_gateway over its calls seen at two layers and
    queued in the scope's window (sql/layer_series.sql; the scope's service, route and tenant are not read); a
    service without such calls is absent."""
    params = replace(scope, service="", route="", tenant="").params(services=list(services))
    out: dict[str, dict[datetime, dict]] = {}
    for r in client.query(_sql("layer_series"), parameters=params):
        p50, p95 = r["t_gateway_q"]
        known = int(r["t_gateway_count"])
        out.setdefault(r["service"], {})[r["minute"].replace(tzinfo=timezone.utc)] = (
            {"p50": p50 if math.isfinite(p50) else None, "p95": p95 if math.isfinite(p95) else None, "count": known}
            if known else {"p50": None, "p95": None, "count": 0})
    return out


def scope_excess(scope: Scope, baseline_start, baseline_end, bucket: str, baseline_mean_ms: float, edges, limit: int,
                 min_count: int) -> list[dict]:
    """The excess of `bucket` (a name of analysis.buckets.ALL; ValueError otherwise; means in ms) per dimension
    (route, tenant, instance, model, segment) and value: {"dimension", "value", "incident_attempts", "incident_mean_ms"
    (None without a known value), "baseline_attempts", "baseline_mean_ms" (None), "excess_ms", "positive_excess_ms",
    "others"} over the attempts queued in [start, end) vs [baseline_start, baseline_end); see sql/scope_excess.sql.

    Segment values are the labels of segment_labels(edges) ("unknown" without input_tokens). Per dimension the
    `limit` values with the largest excess come first, then one row named evidence_types.OTHERS pooling the rest,
    with "others": how many values it holds (None on every other row)."""
    buckets.column(bucket)  # the allow-list: ValueError for an unknown name
    labels = segment_labels(list(edges))
    rows = client.query(_sql("scope_excess"), parameters=scope.params(
        bucket=bucket, baseline_start=utc_naive(baseline_start), baseline_end=utc_naive(baseline_end),
        baseline_mean_ms=baseline_mean_ms, edges=list(edges), limit=limit, min_count=min_count))
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


def scope_excess_layers(scope: Scope, baseline_start, baseline_end, limit: int, min_count: int) -> list[dict]:
    """scope_excess's rows for the engines below a gateway (dimensions engine and engine_instance), from its calls
    seen at two layers: the excess of the call's total (sql/scope_excess_layers.sql; the scope's route and tenant
    are not applied); [] for a service that calls no traced engine."""
    rows = client.query(_sql("scope_excess_layers"), parameters=replace(scope, route="", tenant="").params(
        baseline_start=utc_naive(baseline_start), baseline_end=utc_naive(baseline_end), limit=limit,
        min_count=min_count))
    return [{"dimension": r["dimension"], "value": r["value_or_pool"] if r["is_top"] else OTHERS,
             "incident_attempts": int(r["incident_attempts"]),
             "incident_mean_ms": _mean(r["incident_ms"], r["incident_known_total"]),
             "baseline_attempts": int(r["baseline_known_total"]),
             "baseline_mean_ms": _mean(r["baseline_ms"], r["baseline_known_total"]),
             "excess_ms": float(r["excess_total_ms"]), "positive_excess_ms": float(r["positive_excess_ms"]),
             "others": None if r["is_top"] else int(r["folded"])} for r in rows]


def _mean(total, count) -> float | None:
    return float(total) / int(count) if count else None


def incident_series(scope: Scope, exact=False, instance="") -> list[dict]:
    """[{"at" (aware UTC minute), "attempts", "errors", bucket: {"p50", "p95", "count"} per analysis.buckets.ALL}]
    per minute of queued_at in [start, end) that has attempts, oldest first. A bucket with no known value in a
    minute has count 0 and None quantiles (not measured, never 0). Each hour's current rows: counts are logical. Long
    windows read the sketches (Scope.sketches) unless `exact` (incident detection: its thresholds
    judge single minutes, whose few values a sketch's rank can miss by more) or one instance's (no sketch per
    instance and minute)."""
    name, params = scope.sketched("incident_series", sketchable=not exact and not instance, instance=instance)
    return _series_points(client.query_columns(_sql(name), parameters=params))


def incident_series_slices(scope: Scope, min_attempts: int, min_minutes: int,
                           max_slices: int) -> dict[tuple[str, str], list[dict]]:
    """incident_series (exact) of the whole service under ("", "") and, under ("route" | "tenant" | "instance",
    name), of each slice worth judging on its own, from one read: of a dimension with two named values or more, with
    min_minutes minutes of min_attempts attempts, among the max_slices busiest of its dimension. The window's
    aggregated core reads its minutes from incident_minutes, written when its hours settled."""
    return incident_series_slices_of(replace(scope, service=""), [scope.service], min_attempts, min_minutes,
                                     max_slices)[scope.service]


def incident_series_slices_of(scope: Scope, services: list[str], min_attempts: int, min_minutes: int,
                              max_slices: int) -> dict[str, dict[tuple[str, str], list[dict]]]:
    """incident_series_slices of each of these services of the scope's project (the scope's service, route and
    tenant are not read), from one read: service -> its series (("", "") always, empty without attempts). The
    incidents step reads its services so, a read's planning being ~1/5 of its time."""
    out: dict[str, dict[tuple[str, str], list[dict]]] = {service: {("", ""): []} for service in services}
    scope = replace(scope, service="", route="", tenant="")
    params = scope.counted(min_attempts=min_attempts, min_minutes=min_minutes, max_slices=max_slices,
                           services=list(services))
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


def project_services(scope: Scope) -> list[str]:
    """The services of the scope's project with attempts queued in its window, by name (its service, route and
    tenant are not read)."""
    rows = client.query_rows(_sql("project_services"),
                             parameters=replace(scope, service="", route="", tenant="").counted())
    return [service for (service,) in rows]


def coverage_counts(scope: Scope) -> list[dict]:
    """Per span form (most attempts first): "form", "attempts", "runs" (final attempts), "successes" (attempts
    not 'error'), and per bucket and signal of analysis.reads.coverage the number of those with a known value. Empty
    without attempts."""
    rows = client.query(_sql("coverage_counts"), parameters=scope.counted())
    return [{k: (v if k == "form" else int(v)) for k, v in r.items()} for r in rows]


def instance_starts(scope: Scope, floor_ms, minutes: int, process_starts=()) -> dict:
    """{"starts": [[instance, ISO start]], "share": TTFT outliers (> floor_ms) in the `minutes` after an instance
    started, over all outliers (None without outliers or a floor)}. An instance starts at its first attempt when
    the service was already serving, or at a process start the engine's metrics report (`process_starts`). The
    scope's route and tenant are not applied."""
    if floor_ms is None:
        return {"starts": [], "share": None}
    params = replace(scope, route="", tenant="").params()
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
