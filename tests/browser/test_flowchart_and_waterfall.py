"""Measured in Chromium at a 1440 px wide window: the flowchart's text renders at >= 12 px, and a retried run's
waterfall draws every bar one row tall, the failed attempt's bar present on a row of its own.

Its own light site (overrides tests/browser/conftest.py's `site`): factory spans through the real OTLP path, a
backlog service to diagnose and one retried run (failed attempt, back-off, stage spans), no simulator run.
"""
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from tests.browser.conftest import PASSWORD, USERNAME, committed_live_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SERVICE, RUN_ID, INSTANT_RUN = "wf-svc", "run-wf-1", "run-wf-instant"
WIDTH = 1440
MIN_TEXT_PX = 12


@dataclass
class Site:
    url: str
    project: object


@pytest.fixture(scope="module")
def site(chromium, django_db_setup, django_db_blocker, clickhouse_schema):
    """A live server over committed data, flushed afterwards: see conftest.site for why it is not live_server."""
    with committed_live_server(django_db_blocker) as url:
        yield build(url)


def build(url: str) -> Site:
    """40 backlogged attempts (t_queue 2 s) and run RUN_ID: attempt 1 fails (timeout) after 3 s, 500 ms back-off,
    attempt 2 with connect and network stages; all 10 minutes ago."""
    from django.contrib.auth.models import User

    from analysis.rollups.materialize import materialize
    from ingest.pipeline import export, get_writer
    from projects.models import ApiKey, Project
    from store import client
    from tests import factories as f

    for table in ("spans", "request_buckets"):
        client.command(f"TRUNCATE TABLE IF EXISTS {table}")
    user = User.objects.create_user(USERNAME, password=PASSWORD)
    project = Project.objects.create(name="waterfall-lab")
    project.members.add(user)
    _, raw = ApiKey.issue(project, ["ingest", "read"], name="factory")
    at = int((datetime.now(timezone.utc) - timedelta(minutes=10)).timestamp() * 1e9)
    ms = lambda offset: at + int(offset * f.MS)  # noqa: E731
    backlog = [f.attempt(t_queue_ms=2000.0 + i, start_ns=ms(-60_000 + i * 1000)) for i in range(40)]
    run = {"llm.run.id": RUN_ID, "tenant.id": "acme"}
    root = f.span(name="chat.handle", start_ns=ms(0), duration_ms=4600)
    first = f.span(name="llm.request", start_ns=ms(50), duration_ms=3000, trace_id=root.trace_id, parent=root,
                   events={"queued": 0, "admitted": 40}, status_code=f.Status.STATUS_CODE_ERROR,
                   attributes={**run, "llm.attempt": 1, "llm.retry.cause": "timeout"})
    second = f.attempt(t_queue_ms=10, t_first_token_ms=300, t_stream_ms=600, t_post_ms=20, start_ns=ms(3550),
                       trace_id=root.trace_id, parent=root, attributes={**run, "llm.attempt": 2})
    stages = [f.stage(first, "connect", 40, 25), f.stage(second, "connect", 10, 30),
              f.stage(second, "network", 45, 200)]
    # INSTANT_RUN: attempt 1 refused at once (a 0 ms span), attempt 2 right after
    refused = f.span(name="llm.request", start_ns=ms(20_000), duration_ms=0, status_code=f.Status.STATUS_CODE_ERROR,
                     events={"queued": 0}, attributes={"llm.run.id": INSTANT_RUN, "llm.attempt": 1,
                                                        "llm.retry.cause": "connection_refused"})
    retried = f.attempt(t_queue_ms=5, t_first_token_ms=400, t_stream_ms=2000, start_ns=ms(20_100),
                        attributes={"llm.run.id": INSTANT_RUN, "llm.attempt": 2})
    export(f"Bearer {raw}", f.request(*backlog, root, first, second, *stages, refused, retried,
                                      service=SERVICE).SerializeToString(), "protobuf")
    get_writer().flush(force=True)
    now = datetime.now(timezone.utc)
    materialize(project.id, now - timedelta(hours=2), now + timedelta(minutes=5))
    return Site(url=url, project=project)


@pytest.fixture
def wide(browser):
    """The shared browser at a 1440 px wide viewport (the conftest's window is 1400 px)."""
    inner = browser.js("return window.innerWidth")
    outer = browser.driver.get_window_size()
    browser.driver.set_window_size(outer["width"] + WIDTH - inner, 1000)
    yield browser
    browser.driver.set_window_size(outer["width"], outer["height"])


# Each text element's rendered font size: the computed size times the SVG's scale (its drawn width / its viewBox).
TEXT_SIZES = """
const svg = document.getElementById('flowchart');
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim()).map(t => [
  t.textContent.trim(), parseFloat(getComputedStyle(t).fontSize) * scale, t.getBoundingClientRect().height]);
"""


def test_flowchart_text_is_at_least_12px_at_1440px(wide):
    wide.get(f"/diagnosis/?project=waterfall-lab&service={SERVICE}")
    wide.wait(lambda d: d.execute_script("return !!document.getElementById('flowchart')"), "no flowchart drawn")
    assert wide.js("return window.innerWidth") == WIDTH
    sizes = wide.js(TEXT_SIZES)
    assert len(sizes) > 30  # questions, thresholds, values, verdicts, edge labels
    small = [(text, round(px, 1)) for text, px, _ in sizes if px < MIN_TEXT_PX]
    assert small == [], small
    assert min(height for _, _, height in sizes) >= MIN_TEXT_PX  # the glyph boxes as drawn, not only the CSS
    # the path's sentences use units: the backlog's t_queue p95 reads in seconds
    step = wide.js("return document.querySelector('ol.path li[data-node=queue_p95] .step-text').textContent")
    assert step.startswith("t_queue p95 2.0") and step.endswith(" s is above 1 s → yes"), step
    wide.screenshot("flowchart-1440")


# Per waterfall trace (Plotly's gd._fullData): name, rows (y), bases and lengths, and each drawn bar's height in
# pixels; with the pixel height of one row (the y axis' scale).
BARS = """
const gd = document.getElementById('waterfall-plot');
const ya = gd._fullLayout.yaxis;
const row = Math.abs(ya.l2p(1) - ya.l2p(0));
const traces = gd._fullData.filter(t => t.type === 'bar').map((t, i) => {
  const rects = Array.from(gd.querySelectorAll('.barlayer .trace')[i].querySelectorAll('path'));
  return {name: t.name, y: Array.from(t.y), base: Array.from(t.base), x: Array.from(t.x),
          px: rects.map(r => r.getBoundingClientRect().height)};
});
return {row: row, traces: traces};
"""


def test_retried_run_waterfall_bars_are_one_row_tall_and_the_failed_attempt_has_its_own_row(wide):
    wide.get(f"/runs/{RUN_ID}/?project=waterfall-lab&service={SERVICE}")
    wide.wait_for_charts()
    found = wide.js(BARS)
    row, traces = found["row"], {t["name"]: t for t in found["traces"]}
    assert row > 10  # px per row
    for t in traces.values():
        assert t["px"] and all(0 < px <= row for px in t["px"]), (t["name"], t["px"], row)
    failed, ok = traces["failed attempt"], traces["attempt"]
    assert len(failed["y"]) == 1 and failed["x"] == [3000] and failed["px"][0] > row / 2
    # no other bar shares the failed attempt's row or reaches into it
    others = [(name, y) for name, t in traces.items() if name != "failed attempt" for y in t["y"]]
    assert all(abs(y - failed["y"][0]) >= 1 for _, y in others), others
    assert ok["y"][0] > traces["retry back-off"]["y"][0] > failed["y"][0]
    labels = wide.js("return Array.from(document.querySelectorAll('#waterfall-plot .ytick text'))"
                     ".map(t => t.textContent)")
    assert labels[failed["y"][0]] == "attempt 1 (error: timeout)"
    assert "failed: timeout" in wide.js("return document.querySelector('#waterfall-plot .barlayer').textContent")
    assert wide.console_errors() == []
    wide.screenshot("waterfall-retried-run")


# The drawn box of every edge label of the flowchart: [text, left, top, right, bottom].
LABEL_BOXES = """
return Array.from(document.querySelectorAll('#flowchart text.edge-label')).map(t => {
  const r = t.getBoundingClientRect(); return [t.textContent.trim(), r.left, r.top, r.right, r.bottom]; });
"""


def test_no_two_flowchart_edge_labels_overlap(wide):
    """A box with three ways out (yes, no, not measured) drew two labels on one spot ("not measyesd")."""
    wide.get(f"/diagnosis/?project=waterfall-lab&service={SERVICE}")
    wide.wait(lambda d: d.execute_script("return !!document.getElementById('flowchart')"), "no flowchart drawn")
    boxes = wide.js(LABEL_BOXES)
    assert any(text == "not measured" for text, *_ in boxes)
    overlapping = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                   if a[1] < b[3] - 1 and b[1] < a[3] - 1 and a[2] < b[4] - 1 and b[2] < a[4] - 1]
    assert overlapping == [], overlapping


# The drawn boxes of the waterfall's text: title, legend entries, axis titles, row labels: [text, l, t, r, b].
WATERFALL_TEXT = """
const gd = document.getElementById('waterfall-plot');
return Array.from(gd.querySelectorAll('.gtitle, .legendtext, .xtitle, .ytick text, .xtick text'))
  .filter(t => t.textContent.trim()).map(t => {
    const r = t.getBoundingClientRect(); return [t.textContent.trim(), r.left, r.top, r.right, r.bottom]; });
"""


def overlaps(boxes: list) -> list:
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a[1] < b[3] - 1 and b[1] < a[3] - 1 and a[2] < b[4] - 1 and b[2] < a[4] - 1]


def test_waterfall_text_never_overlaps_and_a_0_ms_failed_attempt_is_a_visible_mark(wide):
    """The legend sat on the x axis title; a failed attempt of 0 ms had a row and nothing on it."""
    wide.get(f"/runs/{INSTANT_RUN}/?project=waterfall-lab&service={SERVICE}")
    wide.wait_for_charts()
    boxes = wide.js(WATERFALL_TEXT)
    assert any(t.startswith("ms since") for t, *_ in boxes) and any(t == "failed attempt" for t, *_ in boxes)
    assert overlaps(boxes) == [], overlaps(boxes)
    marks = wide.js("""
      const gd = document.getElementById('waterfall-plot');
      const labels = Array.from(gd.querySelectorAll('.ytick text')).map(t => t.textContent);
      return gd._fullData.filter(t => t.type === 'scatter').map(t => ({name: t.name, y: Array.from(t.y)}))
        .concat([{labels: labels, points: Array.from(gd.querySelectorAll('.scatterlayer .point'))
          .map(p => { const r = p.getBoundingClientRect(); return [r.width, r.height]; })}]);""")
    *traces, drawn = marks
    failed = [t for t in traces if t["name"] == "failed attempt"]
    assert failed and drawn["labels"][failed[0]["y"][0]] == "attempt 1 (error: connection_refused)", marks
    assert drawn["points"] and all(w >= 6 and h >= 6 for w, h in drawn["points"]), drawn["points"]
    assert wide.console_errors() == []
    wide.screenshot("waterfall-instant-failure")
