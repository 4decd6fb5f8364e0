"""The Diagnosis page's numbers: the flowchart's answer for a window (analysis.diagnosis.service.run_diagnosis, the
API's and the CLI's entry point), or a stored periodic diagnosis as it was made, beside the stored diagnoses of the
service within the window.

A live answer is kept while the window's data is unchanged (analysis/reads/versions.py): a reload or a shared link
does not recompute the evidence, and a new materialization or aggregation of an hour of the window changes the key.
"""
from dataclasses import dataclass

from analysis.diagnosis.service import run_diagnosis
from analysis.errors import AnalysisError
from analysis.models import ServiceCost, WindowDiagnosis
from analysis.reads import versions
from analysis.scope import Scope

RECENT = 24  # stored diagnoses listed beside the answer


@dataclass(frozen=True)
class Diagnosis:
    """result: run_diagnosis's answer (a stored one's as stored), None when none could be made; error: why (the
    AnalysisError's message: no requests in the window); stored: the stored diagnosis shown, None for a live one;
    recent: the service's stored diagnoses overlapping the window, newest first (at most RECENT); differing: those
    of them with another verdict than result's; guarded: the verdict is insufficient_data for too few runs (the
    sample guard), not for what the spans lack."""
    result: dict | None
    error: str | None
    stored: WindowDiagnosis | None
    recent: list[WindowDiagnosis]
    differing: list[WindowDiagnosis]
    guarded: bool

    @property
    def verdict(self) -> str | None:
        return (self.result or {}).get("verdict")

    @property
    def evidence(self) -> dict:
        """The answer's evidence (Evidence.to_json()), {} without an answer."""
        return (self.result or {}).get("evidence", {})


def build(scope: Scope) -> Diagnosis:
    """The diagnosis of the scope's window now."""
    result, error = live(scope)
    return _with_recent(scope, result, error, None)


def of_stored(stored: WindowDiagnosis) -> Diagnosis:
    """A stored periodic diagnosis as it was made, beside the others of its service within its window."""
    scope = Scope(stored.project_id, stored.service, stored.start, stored.end)
    return _with_recent(scope, stored.result, None, stored)


def live(scope: Scope) -> tuple[dict | None, str | None]:
    """(run_diagnosis's answer, None), or (None, why) when it refused the scope; kept while the window's data and the
    service's cost (cost_per_success_usd, kept in Django's database) are unchanged."""
    def read(scope: Scope):
        try:
            return run_diagnosis(scope), None
        except AnalysisError as exc:
            return None, exc.message
    cost = list(ServiceCost.objects.filter(project_id=scope.project_id, service=scope.service)
                .values_list("cost_per_hour_usd", flat=True)[:1])
    return versions.kept("diagnosis", scope, (cost,), read)


def _with_recent(scope: Scope, result: dict | None, error: str | None, stored) -> Diagnosis:
    recent = list(WindowDiagnosis.objects.filter(project_id=scope.project_id, service=scope.service,
                                                 start__lt=scope.end, end__gt=scope.start)
                  .only("start", "end", "verdict").order_by("-end")[:RECENT])
    verdict = (result or {}).get("verdict")
    return Diagnosis(result=result, error=error, stored=stored, recent=recent,
                     differing=[w for w in recent if w.verdict != verdict], guarded=guarded(result))


def guarded(result: dict | None) -> bool:
    """Whether the verdict is insufficient_data for too few runs (the sample guard), not for what the spans lack."""
    sample = (result or {}).get("sample") or {}
    return bool(sample) and sample["runs"] < sample["needed"]
