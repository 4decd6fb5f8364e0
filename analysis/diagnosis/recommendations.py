"""The fixes the seed texts recommend for each verdict, condensed, each citing its source as a readable title.

A recommendation is {"text", "why", "source"}: the fix, the finding it answers ("because t_queue p95 25.7 s is
above 1 s and gap_fraction 0% is below 50%", written by analysis.diagnosis.flowchart), and where it comes from as
"<seed title> — <section>" (the seed texts in /work/shared/seeds), never a seed number. The fixes per verdict are
its record's (analysis.diagnosis.verdicts).
"""
from analysis.diagnosis.verdicts import REGISTRY
from analysis.diagnosis.verdicts.record import B4, SOURCES, fix

# Isolation fixes: recommended only beside a tenant finding (an outlier or a noisy neighbour), whatever the verdict.
TENANT_FIXES = [
    fix("Per tenant quotas to prevent one noisy user from burning your GPU queue", ("003", "Fix 10: Tail mitigation")),
    fix("Give interactive traffic its own lane, apart from heavy traffic", ("000", B4)),
]


def recommend(verdict: str, tenant_findings: list[dict] | bool = (), why: str = "") -> list[dict]:
    """The seed fixes for a verdict (none for healthy), each with `why` (the finding it answers; "because the
    verdict is <verdict>" when the caller has none), plus the tenant fixes when tenant_findings holds a finding
    (their why: the first finding's message). A bare True (no messages) still adds them, with a generic why."""
    because = why or f"because the verdict is {verdict}"
    fixes = [{**f, "why": because} for f in REGISTRY[verdict].fixes]
    if tenant_findings:
        first = tenant_findings[0]["message"] if isinstance(tenant_findings, list) else "a tenant stands out"
        texts = {f["text"] for f in fixes}
        fixes += [{**f, "why": f"because {first}"} for f in TENANT_FIXES if f["text"] not in texts]
    return fixes


def data_fixes(gaps: list[str]) -> list[dict]:
    """What to send when the flowchart cannot decide (analysis.diagnosis.flowchart.missing), as recommendations."""
    return [{"text": gap, "why": "because the questions that tell healthy from slow could not be answered",
             "source": f"{SOURCES['readme']} — The span convention"} for gap in gaps]
