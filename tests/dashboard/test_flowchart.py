"""The flowchart layout: every node and verdict drawn once, nothing overlapping, edges attached to their boxes,
and the path of a real diagnosis highlighted as one chain from the first question to its verdict."""
from itertools import combinations

import pytest

from analysis.diagnosis.flowchart import FLOWCHART, INSUFFICIENT, NODES, diagnose, walk
from analysis.diagnosis.thresholds import DEFAULT
from analysis.diagnosis.verdicts import REGISTRY as VERDICTS
from analysis.evidence_types import Evidence
from dashboard.flowchart import WRAP, layout, step_text

# Evidence from partial JSON: what it leaves out is unknown.
ADMISSION_GAP = Evidence.from_json({"buckets": {"t_queue": {"p95": 5000}}, "gap_fraction": {"service": 0.61234}})
PREFILL = Evidence.from_json({
    "buckets": {"ttft": {"p95": 1500.0}}, "decode": {"ms_per_output_token_p50": 20},
    "churn": {"new_connections_per_success": 0.1}, "stages": {"network_share_of_first_token": 0.1},
    "segments": {"short": {"count": 50, "ttft_p50": 100}, "long": {"count": 50, "ttft_p50": 2000}}})
RETRIES = Evidence.from_json({"retries": {"rate": 0.3}})  # no backlog, normal TTFT and decode: the retry_rate leaf
UNKNOWN = Evidence.from_json({})


def points(edge: dict) -> list[tuple[float, float]]:
    return [tuple(float(c) for c in p.split(",")) for p in edge["points"].split()]


def on_boundary(box: dict, x: float, y: float) -> bool:
    left, top, right, bottom = box["x"], box["y"], box["x"] + box["w"], box["y"] + box["h"]
    on_side = x in (left, right) and top <= y <= bottom
    return on_side or (y in (top, bottom) and left <= x <= right)


def inside(box: dict, x: float, y: float) -> bool:
    return box["x"] < x < box["x"] + box["w"] and box["y"] < y < box["y"] + box["h"]


def reachable_verdicts() -> set:
    seen, todo = set(), [FLOWCHART[0].name]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [NODES[name].yes, NODES[name].no] if name in NODES else []
    # where "healthy" ends when the data cannot show latency is fine (analysis.diagnosis.flowchart.healthy_supported)
    return seen & set(VERDICTS) | ({INSUFFICIENT} if "healthy" in seen else set())


@pytest.fixture
def plain():
    return layout(path=[], verdict=None)


def test_every_node_and_reachable_verdict_appears_once(plain):
    ids = [box["id"] for box in plain["boxes"]]
    assert sorted(ids) == sorted(set(ids))
    assert {b["id"] for b in plain["boxes"] if b["kind"] == "node"} == set(NODES)
    assert {b["id"] for b in plain["boxes"] if b["kind"] == "verdict"} == reachable_verdicts()
    for box in plain["boxes"]:
        assert box["lines"] and all(len(line) <= WRAP for line in box["lines"])
        if box["kind"] == "verdict":
            assert box["lines"] == [box["id"]]


def test_boxes_do_not_overlap_and_fit_the_canvas(plain):
    for a, b in combinations(plain["boxes"], 2):
        apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                 or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])
        assert apart, (a["id"], b["id"])
    for box in plain["boxes"]:
        assert 0 <= box["x"] and box["x"] + box["w"] <= plain["width"]
        assert 0 <= box["y"] and box["y"] + box["h"] <= plain["height"]


def test_layers_follow_the_longest_distance_from_the_first_node(plain):
    depth = {FLOWCHART[0].name: 0}
    for _ in FLOWCHART:
        for node in FLOWCHART:
            for to in (node.yes, node.no):
                if node.name in depth and to in NODES:
                    depth[to] = max(depth.get(to, 0), depth[node.name] + 1)
    tops = sorted({b["y"] for b in plain["boxes"]})
    assert {b["id"]: tops.index(b["y"]) for b in plain["boxes"] if b["kind"] == "node"} == depth


def test_edges_cover_every_branch_and_attach_to_their_boxes(plain):
    boxes = {box["id"]: box for box in plain["boxes"]}
    branches = {(e["from"], e["to"]): e["label"] for e in plain["edges"]}
    for node in FLOWCHART:
        if node.yes == node.no:
            assert branches[(node.name, node.yes)] in ("yes/no", "yes")
        else:
            assert (branches[(node.name, node.yes)], branches[(node.name, node.no)]) == ("yes", "no")
    for edge in plain["edges"]:
        (x0, y0), *_, (x1, y1) = line = points(edge)
        source, target = boxes[edge["from"]], boxes[edge["to"]]
        assert on_boundary(source, x0, y0), edge
        assert on_boundary(target, x1, y1), edge
        assert y1 > y0  # top to bottom
        # No segment passes through a box, its own ends included: sample each segment.
        for (ax, ay), (bx, by) in zip(line, line[1:]):
            for t in (i / 40 for i in range(41)):
                assert not any(inside(box, ax + t * (bx - ax), ay + t * (by - ay)) for box in plain["boxes"]), edge


def test_an_admission_gap_diagnosis_is_highlighted():
    verdict, path = walk(ADMISSION_GAP, DEFAULT)
    assert verdict == "admission_gap"
    chart = layout(path, verdict)
    boxes = {box["id"]: box for box in chart["boxes"]}
    on_path_nodes = {b["id"] for b in chart["boxes"] if b["on_path"] and b["kind"] == "node"}
    assert on_path_nodes == {"queue_p95", "idle_slots"} == {step["node"] for step in path}
    assert [b["id"] for b in chart["boxes"] if b["reached"]] == ["admission_gap"]
    assert boxes["admission_gap"]["on_path"] and not boxes["queue_backlog"]["on_path"]
    assert {k: boxes["queue_p95"][k] for k in ("value", "threshold", "answer")} == \
        {"value": "5 s", "threshold": "yes when ≥ 1 s", "answer": "yes"}
    assert {k: boxes["idle_slots"][k] for k in ("value", "threshold", "answer")} == \
        {"value": "61%", "threshold": "yes when ≥ 50%", "answer": "yes"}
    # Off the path: no value or answer, the default threshold.
    assert {k: boxes["queue_share"][k] for k in ("value", "threshold", "answer")} == \
        {"value": "", "threshold": "yes when ≥ 25%", "answer": ""}
    assert {(e["from"], e["to"]) for e in chart["edges"] if e["on_path"]} == \
        {("queue_p95", "idle_slots"), ("idle_slots", "admission_gap")}


@pytest.mark.parametrize("evidence,expected", [
    (ADMISSION_GAP, "admission_gap"), (UNKNOWN, "healthy"), (PREFILL, "prefill_pressure"), (RETRIES, "retry_amplification"),
])
def test_on_path_edges_chain_from_the_first_node_to_the_verdict(evidence, expected):
    verdict, path = walk(evidence, DEFAULT)
    assert verdict == expected
    chart = layout(path, verdict)
    edges = {e["from"]: e for e in chart["edges"] if e["on_path"]}
    assert len(edges) == len([e for e in chart["edges"] if e["on_path"]]) == len(path)
    at, answers = FLOWCHART[0].name, {step["node"]: step["answer"] for step in path}
    while at in NODES:
        edge = edges[at]
        assert edge["label"] in ("yes/no", "yes" if answers[at] == "yes" else "no")
        at = edge["to"]
    assert at == verdict
    assert {b["id"] for b in chart["boxes"] if b["on_path"]} == set(answers) | {verdict}


def test_missing_values_read_unknown_and_follow_the_no_edge():
    verdict, path = walk(UNKNOWN, DEFAULT)
    chart = layout(path, verdict)
    for box in chart["boxes"]:
        if box["kind"] == "node" and box["on_path"]:
            assert (box["value"], box["answer"]) == ("not measured", "unknown")
    assert {e["label"] for e in chart["edges"] if e["on_path"]} == {"no"}


@pytest.mark.parametrize("path", [[], walk(ADMISSION_GAP, DEFAULT)[1]])
def test_without_a_verdict_nothing_is_highlighted(path):
    chart = layout(path=path, verdict=None)
    assert not any(box["on_path"] or box["reached"] or box["value"] or box["answer"] for box in chart["boxes"])
    assert not any(edge["on_path"] for edge in chart["edges"])
    thresholds = {b["id"]: b["threshold"] for b in chart["boxes"] if b["kind"] == "node"}
    assert thresholds["queue_p95"] == "yes when ≥ 1 s" and thresholds["prefill_ratio"] == "yes when ≥ ×5"


def test_layout_is_deterministic():
    verdict, path = walk(PREFILL, DEFAULT)
    assert layout(path, verdict) == layout(path, verdict)


def test_path_sentences_read_with_units_and_never_in_scientific_notation():
    path = walk(ADMISSION_GAP, DEFAULT)[1]
    assert [step_text(s) for s in path] == ["t_queue p95 5 s is above 1 s → yes", "gap_fraction 61% is above 50% → yes"]
    stored = {k: v for k, v in path[1].items() if k != "text"}  # a diagnosis stored before steps had a "text"
    assert step_text(stored) == "gap_fraction 61% is above 50% → yes"
    unknown = walk(UNKNOWN, DEFAULT)[1]
    assert unknown and all(step_text(s).endswith(" not measured → unknown") for s in unknown)
    assert unknown[0]["text"] == "t_queue p95 not measured → unknown"
    big = Evidence.from_json({"buckets": {"t_queue": {"p95": 25692.644}}, "gap_fraction": {"service": 0.0}})
    steps = walk(big, DEFAULT)[1]
    assert steps[0]["text"] == "t_queue p95 25.7 s is above 1 s → yes"
    assert steps[1]["text"] == "gap_fraction 0% is below 50% → no"
    assert not any("e+" in s["text"] for s in steps)


def test_values_that_round_to_their_threshold_say_which_side_they_are_on():
    near = Evidence.from_json({"buckets": {"t_queue": {"p95": 5000}}, "gap_fraction": {"service": 0.4996}})
    assert walk(near, DEFAULT)[1][1]["text"] == "gap_fraction 50% is just below 50% → no"
    at = Evidence.from_json({"buckets": {"t_queue": {"p95": 1000}}, "gap_fraction": {"service": 0.5}})
    assert [s["text"] for s in walk(at, DEFAULT)[1]] == ["t_queue p95 1 s is at 1 s → yes",
                                                         "gap_fraction 50% is at 50% → yes"]


def test_insufficient_data_is_highlighted_through_the_not_measured_edge():
    result = diagnose(UNKNOWN)  # every answer unknown: the walk ends where "healthy" would be
    assert result["verdict"] == INSUFFICIENT
    chart = layout(result["path"], result["verdict"])
    last = result["path"][-1]["node"]
    on_path = [(e["from"], e["to"], e["label"]) for e in chart["edges"] if e["on_path"]]
    assert (last, INSUFFICIENT, "not measured") in on_path
    assert not any(to == "healthy" for _, to, _ in on_path)
    assert [b["id"] for b in chart["boxes"] if b["reached"]] == [INSUFFICIENT]

