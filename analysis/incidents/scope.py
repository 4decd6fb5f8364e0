"""Scope of an incident: the route, tenant, instance, model or prompt segment whose requests carry its excess.

Pure: queries.scope_excess rows in, [{"dimension", "value", "share"}] out (docs/incidents.md "Causes and scope"). The
excess is measured on the bucket of the incident's top cause (measured()). A value's excess is its incident attempts x
(its mean in the incident - its own baseline mean, or the service's baseline mean when it had fewer than MIN_ATTEMPTS
there); its share is that excess over the dimension's summed positive excess, and its lift is that share over its share
of the incident's attempts. A value is kept when it carries most of the excess (share >= MIN_SHARE) far beyond its
traffic (lift >= MIN_LIFT) with MIN_ATTEMPTS attempts. A service-wide incident spreads its excess like its traffic: no
value is kept, scope [].
"""
from analysis.diagnosis.verdicts import REGISTRY
from analysis.incidents import causes

MIN_SHARE = 0.5
MIN_LIFT = 1.5
MIN_ATTEMPTS = 20
MIN_GROWTH = causes.MIN_GROWTH


def measured(cause: str) -> str:
    """The bucket whose excess locates a cause: its record's (its own time, not the total: streaming time varies far
    more than a network hop, so a total would locate the noise); "total" for a code not registered."""
    return REGISTRY[cause].bucket if cause in REGISTRY else "total"


def scope(rows: list[dict], material_ms: float, verdict: str = "") -> list[dict]:
    """[{"dimension", "value", "share"}] ranked by share (0..1, 3 decimals), from queries.scope_excess rows; [] when the
    excess is spread like the traffic. The verdict's signatures (dimensions in its record) are never its scope. The
    pooled row (evidence_types.OTHERS) counts in the totals but is never named. A kept value's excess must also be
    material: at least MIN_GROWTH x material_ms per attempt (explain passes the baseline's mean TTFT, as
    causes.reference does), so that noise in an unchanged window names nobody."""
    kept = []
    for dimension in dict.fromkeys(r["dimension"] for r in rows):
        if verdict in REGISTRY and dimension in REGISTRY[verdict].signatures:
            continue
        mine = [r for r in rows if r["dimension"] == dimension]
        excess = sum(r["positive_excess_ms"] for r in mine)
        attempts = sum(r["incident_attempts"] for r in mine)
        if excess <= 0 or not attempts:
            continue
        for r in mine:
            share = max(r["excess_ms"], 0.0) / excess
            lift = share / (r["incident_attempts"] / attempts)
            material = r["excess_ms"] >= MIN_GROWTH * material_ms * r["incident_attempts"]
            if (r["others"] is None and share >= MIN_SHARE and lift >= MIN_LIFT and material
                    and r["incident_attempts"] >= MIN_ATTEMPTS):
                kept.append({"dimension": dimension, "value": r["value"], "share": int(share * 1000) / 1000})
    return sorted(kept, key=lambda entry: -entry["share"])
