"""Hand-built traffic for the capacity worksheet's tests, with numbers worked out by hand (see test_capacity.py).

Window [10:00, 10:10) of factories.BASE. Every attempt is a run of its own (no llm.run.id: its run is its trace) of
1,235 ms: queued, admitted 20 ms later, first token 300 ms after, 900 ms of stream, 15 ms of post.
- gw-1 (us-east-1, gpu.count 2): 6 attempts at 10:00:00, :10, ... :50, and 3 at 10:05:00, :20, :40; 800 tokens in, 200
  out.
- gw-2 (eu-west-1, no GPU count: 1 assumed): 2 attempts at 10:02:00 and 10:02:30; 1,800 tokens in, 200 out.
"""
from datetime import timedelta

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests import stored

START, END = f.BASE, f.BASE + timedelta(minutes=10)
WINDOW = {"start": "2026-01-05T10:00:00Z", "end": "2026-01-05T10:10:00Z"}
SERVICE = "cap-svc"


def at(seconds: float) -> int:
    return f.BASE_NS + int(seconds * 1e9)


def gw1() -> list:
    return [f.attempt(start_ns=at(s)) for s in (0, 10, 20, 30, 40, 50, 300, 320, 340)]


def gw2() -> list:
    return [f.attempt(start_ns=at(s), attributes={"gen_ai.usage.input_tokens": 1800}) for s in (120, 150)]


def requests(service: str = SERVICE) -> list:
    return [f.request(*gw1(), service=service, instance="gw-1", resource={"cloud.region": "us-east-1", "gpu.count": 2}),
            f.request(*gw2(), service=service, instance="gw-2", resource={"cloud.region": "eu-west-1"})]


def store(project, key: str, ingest) -> None:
    """requests() through the real ingest path into `project`, materialized: built once per worker and copied for the
    next tests (tests/stored.py), shared by the worksheet's API and command tests."""
    def build():
        ingest(key, *requests())
        materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    stored.once("capacity_sent", (project,), build)
