"""The verdicts registry: one record per verdict code (record.Verdict), read by every place keyed by a verdict.

The flowchart (analysis.diagnosis.flowchart) ends its walk at a registered code and names the causes present beside
it, recommendations gives its fixes, the incidents charge parts of the latency to it and locate it on its bucket
(analysis.incidents.causes, scope), and the Diagnosis page links the pages that show it (dashboard/evidence_links.py).
A new verdict is one record here (and the flowchart node that leads to it), the way alerts/kinds.py adds an alert
kind.
"""
from analysis.diagnosis.thresholds import DEFAULT
from analysis.diagnosis.verdicts import first_token, queue, request
from analysis.diagnosis.verdicts.record import Verdict

REGISTRY: dict[str, Verdict] = {}


def register(verdict: Verdict) -> Verdict:
    """Add a verdict to REGISTRY; ValueError when its code is taken, a threshold is not a Thresholds field, a part is
    charged to another verdict already, or a fix cites no source."""
    if verdict.code in REGISTRY:
        raise ValueError(f"verdict {verdict.code} is registered already")
    unknown = [name for name in verdict.thresholds if not hasattr(DEFAULT, name)]
    if unknown:
        raise ValueError(f"verdict {verdict.code}: unknown thresholds {', '.join(unknown)}")
    taken = [part for part in verdict.parts if part in parts()]
    if taken:
        raise ValueError(f"verdict {verdict.code}: {', '.join(taken)} charged to {parts()[taken[0]]} already")
    if not all(f.get("text") and f.get("source") for f in verdict.fixes):
        raise ValueError(f"verdict {verdict.code}: every fix needs a text and a source")
    REGISTRY[verdict.code] = verdict
    return verdict


def parts() -> dict[str, str]:
    """part of mean latency (analysis.incidents.causes) -> the verdict code its growth is charged to."""
    return {part: verdict.code for verdict in REGISTRY.values() for part in verdict.parts}


# TRICKY: the order of registration is the flowchart's order of cause findings beside a verdict, and of the queue's
# causes in an incident (admission_gap's idle slots are asked before retry_amplification's retries)
for _verdict in (*queue.VERDICTS, *first_token.VERDICTS, *request.VERDICTS):
    register(_verdict)
