"""One verdict as a record: what decides it, what it measures, what to do about it and where to see it.

A record is plain data: node and threshold names (analysis.diagnosis.flowchart, analysis.diagnosis.thresholds),
bucket and part names (analysis.incidents), URL names (the dashboard) are strings, so this package imports none of
the modules that read it. Fixes cite the seed texts (/work/shared/seeds) by title and section, never by number.
"""
from dataclasses import dataclass

SOURCES = {
    "000": "Why Your LLM Responses Are Slow",
    "001": "What causes high latency in LLM inference and how do you fix it?",
    "002": "Why AI/LLM Inference Is Slow",
    "003": "LLM Latency In Production: What Actually Works",
    "004": "Latency Optimization in LLM Inference Systems",
    "readme": "latency_obs docs",
}
# Section names as the seeds spell them (seed 003's practical fixes are numbered; seed 000's bottlenecks too).
B1, B2, B4, B5 = ("Bottleneck 1: Tokenizer and Prompt Assembly", "Bottleneck 2: KV Cache Misses or Poor Cache Behavior",
                  "Bottleneck 4: Batching Misconfiguration", "Bottleneck 5: Network and Gateway Overhead")
B3 = "Bottleneck 3: GPU Memory Pressure"
TRIAGE, SIGNATURES = "Mechanism: bucket dominance triage", "Mechanism: idle gaps under backlog"
PLAYBOOK = "Putting it together: a latency playbook"
FLOWCHART = "the diagnostic flowchart"
SAME_PLACE = "Fix 7: Put compute and data in the same place"
CONVENTION = "The span convention"


def fix(text: str, *cited: tuple[str, str]) -> dict:
    """{"text", "source"}: cited are (seed, section) pairs, shown as "<title> — <section>", joined by "; "."""
    return {"text": text, "source": "; ".join(f"{SOURCES[seed]} — {section}" for seed, section in cited)}


# eq=False: records are compared (and hashed) by identity; their fixes and pages hold dicts
@dataclass(frozen=True, eq=False)
class Verdict:
    """A verdict code and everything keyed by it.

    nodes: the flowchart nodes whose answer ends at the verdict; thresholds: the Thresholds fields of those nodes and
    of `present`. present: groups of nodes, each answering yes on every node, that show the verdict's cause present
    beside another verdict (a finding); implies: the verdicts it explains by construction (never findings beside it).
    fixes: fix() dicts, () when there is nothing to fix. bucket: the bucket whose excess locates it in an incident's
    scope; signatures: scope dimensions that are its signature rather than a place it is confined to. parts: the
    parts of mean latency per attempt (analysis.incidents.causes) whose growth is charged to it; queue_nodes: compared
    nodes that, all answering yes, charge t_queue's growth to it instead of t_queue's owner. pages: (URL name, extra
    query) of the pages that show its evidence. is_cause: False for the verdicts that name no cause (a gateway does
    not ask its engines beneath them); explains_tail: False when a TTFT tail under it stays unexplained (hidden
    retries may be named); second_hand: a gateway's verdict that its engines' own spans split better.
    """
    # second_hand: a call's first token holds the engine's queue, scheduler stalls and cold replicas too, and those
    # grow with prompt length like prefill does (long prompts take longer to admit and to prefill), so the calls'
    # prompt-length ratio says prefill_pressure for an engine whose own diagnosis says cold_start or admission_gap
    # (two-layer simulator, docs/cross-layer.md); analysis.diagnosis.service puts the engine's cause in its place.
    code: str
    nodes: tuple[str, ...]
    thresholds: tuple[str, ...]
    fixes: tuple[dict, ...]
    present: tuple[tuple[str, ...], ...] = ()
    implies: tuple[str, ...] = ()
    bucket: str = "total"
    signatures: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    queue_nodes: tuple[str, ...] = ()
    pages: tuple[tuple[str, dict], ...] = ()
    is_cause: bool = True
    explains_tail: bool = True
    second_hand: bool = False
