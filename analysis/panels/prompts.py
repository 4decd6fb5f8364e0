"""The Prompt length page's numbers: bucket distributions per prompt-length segment, and the prefill ratio the
diagnosis reads (analysis.diagnosis.flowchart.prefill_ratio over evidence.segments, not recomputed)."""
from dataclasses import dataclass

from django.conf import settings

from analysis.buckets import ALL
from analysis.diagnosis import evidence
from analysis.diagnosis.flowchart import prefill_ratio
from analysis.diagnosis.thresholds import Thresholds, configured
from analysis.reads import queries
from analysis.scope import Scope

LEVELS = ("p50", "p95")


@dataclass(frozen=True)
class Prompts:
    """rows: queries.bucket_distribution_by_segment's segments in ascending prompt length, those without
    input_tokens last, each with a "label"; counted: per row, whether the prefill ratio counts it; lines: per bucket
    and level of LEVELS, its values across the rows (segments as columns, like the charts' x axis); edges: the
    segments' cuts (input tokens); ratio: the diagnosis's prefill ratio."""
    rows: list[dict]
    counted: list[bool]
    lines: list[tuple[str, list]]
    edges: list[int]
    ratio: float | None
    thresholds: Thresholds


def build(scope: Scope) -> Prompts:
    edges = list(settings.ANALYSIS_SEGMENT_EDGES)
    segments = queries.bucket_distribution_by_segment(scope, edges)
    thresholds = configured()
    # ascending prompt length, attempts without input_tokens last (the query puts them first)
    rows = sorted(({"label": s["segment"], **s} for s in segments), key=lambda s: s["segment"] == "unknown")
    return Prompts(
        rows=rows, edges=edges, thresholds=thresholds,
        ratio=prefill_ratio(evidence.segments(segments), thresholds),
        counted=[s["segment"] != "unknown" and s["requests"] >= thresholds.prefill_min_count for s in rows],
        lines=[(f"{b} {level}", [s["buckets"][b][level] for s in rows]) for b in ALL for level in LEVELS])
