"""The diagnostic flowchart (analysis.diagnosis.flowchart.FLOWCHART) laid out as an SVG diagram description.

Pure: a diagnosis path and verdict in, boxes and edges in pixels out, so a template draws the chart with plain
<rect>, <text> and <polyline> and highlights the path taken. A small layered (Sugiyama-style) layout: longest-path
layers, a dummy slot in every layer an edge skips (so long edges run between boxes, never through them),
barycenter sweeps to limit crossings, then x positions pulled towards neighbours without overlapping.
The geometry does not depend on the path, so it is computed once.
"""
import textwrap
from functools import cache
from itertools import combinations

from analysis.diagnosis.flowchart import FLOWCHART, INSUFFICIENT, NODES, comparison
from analysis.diagnosis.thresholds import DEFAULT
from analysis.wording import fmt

# Drawn at its natural size (never scaled down, the page scrolls it instead), so these pixels are the text's:
# 13 px questions and 12 px values (dashboard.css) stay legible at any window width.
NODE_W, NODE_H = 240, 112  # room for 4 wrapped question lines, the threshold line and the value line
LINE = 16  # baseline to baseline of the question lines
VERDICT_W, VERDICT_H = 160, 38
BOX_GAP, DUMMY_GAP = 36, 22  # horizontal space between boxes; between a long edge and its neighbours
ROW_GAP = 64  # vertical space between layers: two stubs plus a slanted run
STUB = 20  # vertical run at both ends of an edge: room for its label, and a straight arrowhead
DUMMY_WEIGHT = 8  # how much more a long edge's dummy resists moving than a box
MARGIN = 20
WRAP = 31  # characters per question line: about 7 px each at 13 px
UNMEASURED = "not measured"  # the label of the edge to insufficient_data


def step_text(step: dict) -> str:
    """A path step's sentence ("t_queue p95 25.7 s is above 1 s → yes"); diagnoses stored before steps had a
    "text" get it built the same way."""
    node = NODES.get(step["node"])
    if step.get("text") or node is None:
        return step.get("text", "")
    return f"{comparison(step, node.unit)} → {step['answer']}"


def box_value(step: dict, unit: str) -> str:
    """The value line of a box: "25.7 s", "not measured", or the bound that answered: "≤ 300 ms (total p95)"."""
    if step["value"] is None and step.get("bound") is not None:
        return f"≤ {fmt(step['bound'], unit)} ({step['bound_name']})"
    return fmt(step["value"], unit)


def _mean(x: dict, items: list) -> float:
    return sum(x[v] for v in items) / len(items)


def _edges() -> list[tuple[str, str, str]]:
    """(from, to, label) per branch; a node whose two answers lead to the same place gets one "yes/no" edge. The
    node whose "no" is healthy also leads to insufficient_data: where the walk ends when the data cannot show
    that latency is fine (analysis.diagnosis.flowchart.healthy_supported)."""
    edges = []
    for node in FLOWCHART:
        pairs = [(node.yes, "yes/no")] if node.yes == node.no else [(node.yes, "yes"), (node.no, "no")]
        pairs += [(INSUFFICIENT, UNMEASURED)] if node.no == "healthy" else []
        edges += [(node.name, to, label) for to, label in pairs]
    return edges


def _crossings(rows: list[list[str]], succ: dict) -> int:
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        at = {v: k for k, v in enumerate(upper + lower)}
        segs = [(at[a], at[b]) for a in upper for b in succ[a]]
        total += sum((a1 - a2) * (b1 - b2) < 0 for (a1, b1), (a2, b2) in combinations(segs, 2))
    return total


def _sweep(rows: list[list[str]], pred: dict, succ: dict) -> tuple[int, list[list[str]]]:
    """Alternate down/up barycenter sweeps; the ordering with the fewest crossings seen (ties: the earliest)."""
    best = (_crossings(rows, succ), [r[:] for r in rows])
    for sweep in range(6):
        down = sweep % 2 == 0
        for i in (range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)):
            at = {v: k for k, v in enumerate(rows[i - 1] if down else rows[i + 1])}
            near = pred if down else succ
            rows[i] = sorted(rows[i], key=lambda v: sum(at[n] for n in near[v]) / len(near[v]) if near[v]
                             else rows[i].index(v))
        best = min(best, (_crossings(rows, succ), [r[:] for r in rows]), key=lambda b: b[0])
    return best


def _place(row: list[str], want: dict, width: dict) -> dict:
    """Centres closest (weighted least squares) to `want` that keep the row's order and gaps: isotonic regression
    (PAVA) on want - offset, offset being each item's place in the row packed tight. Dummies weigh more, so long
    edges stay straight and boxes move aside for them."""
    offsets, acc = [], 0.0
    for k, v in enumerate(row):
        if k:
            gap = BOX_GAP if width[v] and width[row[k - 1]] else DUMMY_GAP
            acc += (width[row[k - 1]] + width[v]) / 2 + gap
        offsets.append(acc)
    blocks = []  # [mean, weight, count] of pooled items, means non-decreasing
    for v, off in zip(row, offsets):
        blocks.append([want[v] - off, 1 if width[v] else DUMMY_WEIGHT, 1])
        while len(blocks) > 1 and blocks[-2][0] >= blocks[-1][0]:
            (m2, w2, c2), (m1, w1, c1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    shifts = [m for m, _, c in blocks for _ in range(c)]
    return {v: s + off for v, s, off in zip(row, shifts, offsets)}


@cache
def _geometry() -> tuple[dict, dict, dict, list]:
    """(x centre, y top, width) per item, and per edge (from, to, label, [(x, y), ...]); items include dummies."""
    edges = _edges()
    layer = {FLOWCHART[0].name: 0}
    for _ in FLOWCHART:  # longest path by relaxation: the chart is a DAG, so len(FLOWCHART) rounds settle it
        for src, dst, _label in edges:
            if src in layer:
                layer[dst] = max(layer.get(dst, 0), layer[src] + 1)
    width = {n: NODE_W if n in NODES else VERDICT_W for n in layer}
    chains = []  # one item per layer an edge spans, with a zero-width dummy in every layer it skips
    for src, dst, _label in edges:
        dummies = [f"{src}>{dst}@{i}" for i in range(layer[src] + 1, layer[dst])]
        layer.update({d: layer[src] + 1 + k for k, d in enumerate(dummies)})
        width.update(dict.fromkeys(dummies, 0))
        chains.append([src, *dummies, dst])
    pred, succ = {v: [] for v in layer}, {v: [] for v in layer}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            succ[a].append(b)
            pred[b].append(a)

    def first_order(flip):  # depth-first, yes before no except at `flip`: one start of the crossing search
        rows = [[] for _ in range(max(layer.values()) + 1)]

        def visit(v):
            if v not in rows[layer[v]]:
                rows[layer[v]].append(v)
                for s in (succ[v][::-1] if v == flip else succ[v]):
                    visit(s)
        visit(FLOWCHART[0].name)
        return rows
    # Barycenters alone get stuck (retry_amplification has parents in both the queue and the TTFT branches),
    # so try every single flip of branch order as a start and keep the fewest crossings.
    _, rows = min((_sweep(first_order(flip), pred, succ) for flip in [None, *NODES]), key=lambda b: b[0])
    x = {v: 0.0 for v in layer}
    for sweep in range(12):  # pull each item to the mean of its neighbours above (or below), ending downwards
        down = sweep % 2 == 1
        near = pred if down else succ
        for row in (rows[1:] if down else rows[-2::-1]):
            # A dummy is pulled by both of its neighbours, which straightens the long edge it belongs to.
            want = {v: _mean(x, near[v] if width[v] else pred[v] + succ[v]) if near[v] else x[v] for v in row}
            x.update(_place(row, want, width))
    left = min(x[v] - width[v] / 2 for v in layer)
    x = {v: round(c - left + MARGIN) for v, c in x.items()}
    top = {v: MARGIN + layer[v] * (NODE_H + ROW_GAP) for v in layer}

    def ports(v, ks, other):  # spread edge ends along a box side, ordered by where their other end lies
        ks = sorted(ks, key=lambda k: (x[other(k)], k))
        return {k: x[v] - width[v] / 2 + width[v] * (r + 1) / (len(ks) + 1) for r, k in enumerate(ks)}
    out_x, in_x = {}, {}
    for v in layer:
        out_x.update(ports(v, [k for k, c in enumerate(chains) if c[0] == v], lambda k: chains[k][1]))
        in_x.update(ports(v, [k for k, c in enumerate(chains) if c[-1] == v], lambda k: chains[k][-2]))

    def free(d, at):  # is x `at` between dummy d's row neighbours, so a straight edge there adds no crossing?
        row, k = rows[layer[d]], rows[layer[d]].index(d)
        lo = x[row[k - 1]] + width[row[k - 1]] / 2 + DUMMY_GAP if k else at
        hi = x[row[k + 1]] - width[row[k + 1]] / 2 - DUMMY_GAP if k + 1 < len(row) else at
        return lo <= at <= hi
    routes = []
    for k, ((src, dst, label), chain) in enumerate(zip(edges, chains)):
        (sx, sy), (tx, ty) = (out_x[k], top[src] + NODE_H + STUB), (in_x[k], top[dst] - STUB)
        bends = [(x[d], y) for d in chain[1:-1] for y in (top[d], top[d] + NODE_H)]  # through the skipped rows
        if all(free(d, sx + (tx - sx) * (y - sy) / (ty - sy)) for d in chain[1:-1] for y in (top[d], top[d] + NODE_H)):
            bends = []  # a long edge runs straight when it clears the boxes it passes
        routes.append((src, dst, label, [(sx, sy - STUB), (sx, sy), *bends, (tx, ty), (tx, ty + STUB)]))
    return x, top, width, routes


LABEL_LINE = 13  # px between two edge labels on one side of a box


def layout(path: list[dict], verdict: str | None) -> dict:
    """Boxes and edges of the flowchart, highlighting `path`; with verdict None nothing is highlighted."""
    steps = {step["node"]: step for step in path} if verdict is not None else {}
    x, top, width, routes = _geometry()
    edges, beside = [], {}  # beside: (src, side) -> labels already set on that side of that box
    for src, dst, label, points in sorted(routes, key=lambda r: abs(r[3][0][0] - x[r[0]]), reverse=True):
        answer = steps.get(src, {}).get("answer")  # yes takes the yes edge; no and unknown take the no edge
        on_path = answer is not None and (label == "yes/no" or (answer == "yes") == (label == "yes"))
        if dst in (INSUFFICIENT, "healthy"):  # the same answers lead to both: the verdict says which was taken
            on_path = answer is not None and dst == verdict
        # The label sits beside the start stub, on the outer side: left of the left edge, right of the right one.
        # TRICKY: a box with three ways out (yes, no, not measured) has two stubs on one side, whose labels would
        # overlap ("not measyesd"): the inner one's label goes a line lower, under the outer one's.
        (sx, sy), side = points[0], -1 if points[0][0] < x[src] else 1
        rank = beside.get((src, side), 0)
        beside[(src, side)] = rank + 1
        edges.append({"from": src, "to": dst, "label": label, "on_path": on_path,
                      "points": " ".join(f"{round(px)},{round(py)}" for px, py in points),
                      "label_x": round(sx + side * (7 + 3.7 * len(label))),
                      "label_y": round(sy + STUB / 2 + LABEL_LINE * rank)})
    boxes = []
    for v in sorted((v for v in width if width[v]), key=lambda v: (top[v], x[v])):
        on_path = v in steps or v == verdict
        box = {"id": v, "x": round(x[v] - width[v] / 2), "y": top[v], "w": width[v], "on_path": on_path,
               "reached": v == verdict, "value": "", "threshold": "", "answer": ""}
        box["cx"] = box["x"] + width[v] / 2
        if v in NODES:
            step = steps.get(v)
            unit = NODES[v].unit
            box.update(kind="node", h=NODE_H, lines=textwrap.wrap(NODES[v].question, WRAP), threshold="yes when ≥ "
                       + fmt(step["threshold"] if step else getattr(DEFAULT, NODES[v].threshold), unit))
            if step:
                box.update(value=box_value(step, unit), answer=step["answer"])
            # SVG text does not wrap: each question line, the threshold and the value get their own baseline
            box["text"] = [(top[v] + 18 + LINE * i, line) for i, line in enumerate(box["lines"])]
            box["threshold_y"], box["value_y"] = top[v] + NODE_H - 28, top[v] + NODE_H - 10
        else:
            box.update(kind="verdict", h=VERDICT_H, lines=[v], text=[(top[v] + VERDICT_H / 2, v)])
        boxes.append(box)
    return {"width": max(b["x"] + b["w"] for b in boxes) + MARGIN,
            "height": max(b["y"] + b["h"] for b in boxes) + MARGIN, "boxes": boxes, "edges": edges}
