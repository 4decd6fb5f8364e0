"""The retry numbers of a scope: its runs, their extra attempts and what the failed attempts wasted, as the weekly
review shows them and the retry_rate alert kind judges them (queries.retry_summary: exact counts, over the window's
aggregated core and its edges).

The diagnosis reads the same summary (analysis.diagnosis.evidence.retries); its retry rate is over known_runs (the
runs whose spans say which attempts belong together), the alert's extra_per_run over every run.
"""
from dataclasses import dataclass, replace

from analysis.reads import queries
from analysis.scope import Scope
from analysis.stats import ratio


@dataclass(frozen=True)
class Retries:
    """Counts over the runs whose final attempt was queued in the scope's window: runs, known_runs (their attempts
    known to belong together), successful_runs, runs_with_retries and extra_attempts (the sum of attempts - 1: both
    over known_runs), attempts, failed_attempts, the tokens failed attempts consumed (wasted_input_tokens) and
    produced (wasted_output_tokens), causes ({cause: failed attempts}, "" when the span named none)."""
    runs: int
    known_runs: int
    successful_runs: int
    runs_with_retries: int
    extra_attempts: int
    attempts: int
    failed_attempts: int
    wasted_input_tokens: int
    wasted_output_tokens: int
    causes: dict

    @property
    def extra_per_run(self) -> float | None:
        """Extra attempts per run (the retry_rate alert's value); None without runs."""
        return ratio(self.extra_attempts, self.runs)


def build(scope: Scope) -> Retries:
    return Retries(**queries.retry_summary(scope))


def per_group(scope: Scope, by: str) -> dict[str, Retries]:
    """build() per value of `by` (route or tenant: queries.DIMENSIONS) that has attempts in the scope, most attempts
    first; any other `by` (the alert's "service") is the whole scope, under the key ""."""
    if by not in queries.DIMENSIONS:
        return {"": build(scope)}
    rows = queries.bucket_distribution_by_dimension(scope, dimension=by)
    return {r["value"]: build(replace(scope, **{by: r["value"]})) for r in rows}
