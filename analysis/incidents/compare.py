"""The flowchart asked of an incident against its baseline: every node on both windows, answers that need a change.

Pure: two Evidence in (analysis.diagnosis.evidence.collect of the incident's window and of its baseline), steps out. A
magnitude node (a p95, a share, a rate, gap_fraction, decode speed, the prefill ratio) answers yes for an incident
only when it is yes against its absolute threshold AND it grew: the baseline answered no (or unknown), or the value
is at least GROWTH times the baseline's. Otherwise a service that is always slow in one way (a steady slow decode)
would blame its old trouble for a new incident of another cause. The correlation nodes (ABSOLUTE) keep their
absolute answer: a rank correlation describes how the incident behaves, not how much of something it has.
analysis.diagnosis.flowchart is not changed: its plain diagnosis still answers against the thresholds alone.
"""
from analysis.diagnosis.flowchart import FLOWCHART, LABELS, NODES, Node, evaluate
from analysis.diagnosis.thresholds import Thresholds
from analysis.diagnosis.verdicts import REGISTRY
from analysis.evidence_types import Evidence
from analysis.wording import fmt, ratio

GROWTH = 1.5  # a magnitude has changed when it is at least this many times the baseline's
ABSOLUTE = frozenset({"retry_queue_spearman", "churn_spearman"})  # correlations: their answer stays absolute


def grew(value: float, baseline: dict) -> bool:
    """True when `value` is a change from the baseline step: it answered no or unknown, or value >= GROWTH x its."""
    if baseline["answer"] != "yes" or baseline["value"] is None or baseline["value"] <= 0:
        return True
    return value >= GROWTH * baseline["value"]


def compare(node: Node, incident: Evidence, baseline: Evidence, thresholds: Thresholds) -> dict:
    """One path step of analysis.diagnosis.flowchart.evaluate on the incident, with "absolute_answer" (against the threshold
    alone), "baseline_value", "baseline_answer", "change" (wording.ratio, "" when unknown) and "comparison" (a
    sentence); "answer" is the absolute answer, turned to "no" for a magnitude that did not grow."""
    step, before = evaluate(node, incident, thresholds), evaluate(node, baseline, thresholds)
    absolute = step["answer"]
    answer = absolute
    if absolute == "yes" and node.name not in ABSOLUTE and not grew(step["value"], before):
        answer = "no"
    label = LABELS.get(node.name, node.name)
    change = ratio(step["value"], before["value"]) if node.name not in ABSOLUTE else ""
    sentence = f"{label} {fmt(step['value'], node.unit)} vs baseline {fmt(before['value'], node.unit)}"
    return {**step, "answer": answer, "absolute_answer": absolute, "baseline_value": before["value"],
            "baseline_answer": before["answer"], "change": change,
            "comparison": f"{sentence}: {change}" if change else sentence}


def compared_steps(incident: Evidence, baseline: Evidence, thresholds: Thresholds) -> dict[str, dict]:
    """node name -> compare() of every node of the flowchart (on the path or not)."""
    return {node.name: compare(node, incident, baseline, thresholds) for node in FLOWCHART}


def walk(steps: dict[str, dict]) -> tuple[str, list[dict]]:
    """Follow the flowchart on compared steps from its first node to a verdict: (verdict, path)."""
    path, current = [], FLOWCHART[0].name
    while current not in REGISTRY:
        node = NODES[current]
        path.append(steps[current])
        current = node.yes if steps[current]["answer"] == "yes" else node.no
    return current, path
