"""Diagnosis thresholds: defaults calibrated on the simulator presets, overridable from settings.

Each default sits well clear of healthy traffic (20 simulated minutes of the `healthy` preset: t_queue p95 0,
TTFT p95 ~256 ms, retry rate 0.006, 0.03 new connections per success, prep share 0.20, network share 0.13,
~16 ms per output token, t_post share 0.005) and well inside the preset it is meant to catch, so that the
diagnosis does not cry wolf. Override single values with `ANALYSIS_THRESHOLDS = {"name": value}` in settings.
"""
from dataclasses import dataclass, fields, replace

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class Thresholds:
    # Queue: backlog preset has t_queue p95 43.6 s and a 0.77 share; admission_gap 2.6 s; healthy 0.
    queue_p95_ms: float = 1000.0
    queue_share: float = 0.25
    # Share of backlog time with in_flight < cap: admission_gap ~1.0, queue_backlog 0.0.
    gap_fraction: float = 0.5
    # Extra attempts per run: retry preset 0.30, healthy 0.006. Spearman(retries, queue depth) 0.89 there.
    retry_rate: float = 0.10
    retry_queue_spearman: float = 0.5
    # Share of t_first_token spent in tokenize + prompt_build + policy: preprocessing 0.67, healthy 0.20.
    prep_share: float = 0.45
    # TTFT p95: healthy ~256 ms; churn 1.09 s, network ~750 ms, long prompts several seconds.
    ttft_p95_ms: float = 600.0
    # Decode speed (median ms per output token): healthy ~16, decode_throughput preset 57.
    decode_ms_per_token: float = 35.0
    # Connection churn: churn preset 0.55 new connections per success (healthy 0.03), Spearman 0.92.
    new_connections_per_success: float = 0.25
    churn_spearman: float = 0.5
    # Network share of t_first_token: network preset 0.89, healthy 0.13.
    network_share: float = 0.5
    # TTFT p50 of the longest vs the shortest prompt segment: prefill preset ~20x. Segments need this many requests.
    prefill_ratio: float = 5.0
    prefill_min_count: int = 20
    # t_post share of request time (p50): post_processing preset 0.38, healthy 0.005.
    post_share: float = 0.15
    # A tenant is an outlier when its TTFT or total p95 is this many times the service's, over enough requests.
    tenant_outlier_ratio: float = 3.0
    tenant_min_count: int = 20
    # A noisy neighbour holds this share of busy slots during backlog (noisy preset: 0.63 with 25% of arrivals).
    noisy_in_flight_share: float = 0.5
    # Below this share of successful runs, reliability is a finding on its own.
    min_success_rate: float = 0.95


DEFAULT = Thresholds()


def configured() -> Thresholds:
    """The defaults with settings.ANALYSIS_THRESHOLDS applied; unknown names raise ImproperlyConfigured."""
    overrides = getattr(settings, "ANALYSIS_THRESHOLDS", None) or {}
    known = {f.name: f.type for f in fields(Thresholds)}
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ImproperlyConfigured(f"ANALYSIS_THRESHOLDS has unknown names: {', '.join(unknown)}")
    try:
        values = {name: (int if known[name] in (int, "int") else float)(v) for name, v in overrides.items()}
    except (TypeError, ValueError) as exc:
        raise ImproperlyConfigured(f"ANALYSIS_THRESHOLDS values must be numbers: {exc}") from None
    return replace(DEFAULT, **values)
