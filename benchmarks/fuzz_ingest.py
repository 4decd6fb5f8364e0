"""`make fuzz`: the strategies of tests/ingest/fuzzing.py, 100,000+ cases, in this process.

HTTP cases go through Django's test client (middleware, views, decode, spool, writer: all real) on a
temporary data dir with its own SQLite DB and chDB store, as the tests run. Groups, by share of --cases:

  protobuf        mutated valid protobuf bodies (flips, truncations, insertions, concatenations,
                  varint splices), gzipped or not, POSTed to /v1/traces with an ingest key
  json            generated and mutated OTLP/JSON documents (odd types, lone surrogates, 1e400/NaN/
                  Infinity, deep nesting, wrong shapes), also as bad UTF-8 and as mutated bytes
  headers         any of those with odd Content-Type, Content-Encoding (and corrupt gzip),
                  Authorization and Content-Length values
  api             any method on /api/ and /v1/ paths, known and unknown, with odd query strings
  mixed_json      (no HTTP) valid spans among hostile ones: decode must accept exactly the valid ones
  mixed_protobuf  the same for protobuf

Every answer must pass fuzzing.check: a documented status (a 5xx only as a documented 503), a body that
parses in its stated Content-Type, an ExportTraceServiceResponse for a 200. Prints progress, the answers
by status and reason per group, and the first failing cases with their tracebacks; exits 1 on any
failure. Hypothesis runs with the "fuzz" profile (random; --seed makes a run repeatable).

    .venv/bin/python benchmarks/fuzz_ingest.py [--cases 100000] [--seed N] [--groups protobuf,json]
"""
from __future__ import annotations

import argparse
import gzip
import logging
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"  # a temporary data dir (removed at exit)
os.environ.pop("DATABASE_URL", None)  # so: SQLite in that dir, never a shared database
os.environ.setdefault("HYPOTHESIS_PROFILE", "fuzz")

import django  # noqa: E402

django.setup()

from django.conf import settings as django_settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.signals import got_request_exception  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from hypothesis import given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from ingest.decode import decode_json, decode_protobuf  # noqa: E402
from ingest.otlp_proto import LenientRequest  # noqa: E402
from tests.ingest import fuzzing as fz  # noqa: E402

SHARES = {"protobuf": 0.30, "json": 0.30, "headers": 0.25, "api": 0.10, "mixed_json": 0.025, "mixed_protobuf": 0.025}
EXAMPLES_KEPT = 3  # failing cases printed per kind of failure


class Run:
    """Counts answers, keeps the first failing cases, prints progress."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.labels: dict[str, Counter] = {}
        self.failures: dict[str, list[str]] = {}
        self.last_exception = ""
        self.every = max(1000, total // 50)

    def record(self, group: str, label: str) -> None:
        self.labels.setdefault(group, Counter())[label] += 1
        self.done += 1
        if self.done % self.every == 0:
            elapsed = time.monotonic() - self.started
            failed = sum(len(v) for v in self.failures.values())
            print(f"[{elapsed:7.1f}s] {self.done:>7}/{self.total} cases, {self.done / elapsed:5.0f}/s, "
                  f"now {group}, failures {failed}", flush=True)

    def fail(self, group: str, exc: BaseException, case) -> None:
        kind = f"{group}: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
        examples = self.failures.setdefault(kind, [])
        if len(examples) < EXAMPLES_KEPT:
            detail = "".join(traceback.format_exception(exc)[-6:])
            examples.append(f"{case!r:.1500}\n{detail}{self.last_exception}")
        self.record(group, f"FAILED {type(exc).__name__}")


def http_case(value) -> fz.Case:
    if isinstance(value, fz.Case):
        return value
    if isinstance(value, tuple):  # (protobuf body, gzipped)
        body, gzipped = value
        if gzipped:
            return fz.Case(body=gzip.compress(body, compresslevel=1), extra={"HTTP_CONTENT_ENCODING": "gzip"})
        return fz.Case(body=body)
    return fz.Case(body=value, content_type=fz.JSON)


def decode_check(value, decode, parse) -> str:
    body, valid_ids, hostile = value
    decoded = decode(body, django_settings.INGEST_MAX_ATTRIBUTES)
    assert (decoded.accepted, decoded.rejected_count) == (len(valid_ids), hostile), decoded.message()
    kept = parse(decoded.body)
    assert sorted(s.span_id for rs in kept.resource_spans for ss in rs.scope_spans for s in ss.spans) == sorted(valid_ids)
    return "valid spans all accepted, hostile all rejected"


def groups(client, keys) -> dict:
    """group name -> (strategy, check(value) -> label)."""
    def http(value):
        case = http_case(value)
        return fz.check(case, fz.send(client, case, keys))

    return {
        "protobuf": (st.tuples(fz.protobuf_bodies, st.booleans()), http),
        "json": (fz.json_bodies, http),
        "headers": (fz.ingest_cases(), http),
        "api": (fz.api_cases(), http),
        "mixed_json": (fz.mixed_json_requests(), lambda v: decode_check(v, decode_json, ExportTraceServiceRequest.FromString)),
        "mixed_protobuf": (fz.mixed_protobuf_requests(), lambda v: decode_check(v, decode_protobuf, LenientRequest.FromString)),
    }


def run_group(run: Run, name: str, strategy, check, cases: int, seed_value: int | None) -> None:
    @settings(max_examples=cases)
    @given(strategy)
    def fuzz(value):
        run.last_exception = ""
        try:
            run.record(name, check(value))
        except Exception as exc:  # noqa: BLE001 -- counted and printed: the point of the run
            run.fail(name, exc, value)

    if seed_value is not None:
        fuzz = seed(seed_value)(fuzz)
    fuzz()


def set_up() -> dict:
    """Migrated SQLite and chDB in the temporary data dir, and keys of one project for fuzzing.KEY_KINDS."""
    from store.migrate import migrate
    from projects.models import ApiKey, Project

    setup_test_environment()
    call_command("migrate", verbosity=0, interactive=False)
    migrate()
    project = Project.objects.create(name="fuzz")
    row, revoked = ApiKey.issue(project, ["ingest"])
    row.revoke()
    return {"ingest": ApiKey.issue(project, ["ingest"])[1], "read": ApiKey.issue(project, ["read"])[1], "revoked": revoked}


def report(run: Run, elapsed: float) -> None:
    print(f"\n{run.done} cases in {elapsed:.0f} s ({run.done / elapsed:.0f}/s)")
    total = Counter()
    for group, labels in run.labels.items():
        print(f"\n{group} ({sum(labels.values())} cases)")
        for label, n in labels.most_common():
            print(f"  {n:>7}  {label}")
        total.update(labels)
    print("\nall groups")
    for label, n in total.most_common():
        print(f"  {n:>7}  {label}")
    from ingest.pipeline import get_writer

    writer = get_writer()
    writer.flush(force=True)
    segments, size = writer.spool.backlog()
    print(f"\nspool after a forced flush: {segments} segment(s), {size} bytes; writer error: {writer.last_error or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--groups", default=",".join(SHARES))
    args = parser.parse_args()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)  # a warning per 4xx; 500s are caught below
    keys = set_up()
    client = Client(raise_request_exception=False)
    run = Run(args.cases)

    def remember(sender, request=None, **kwargs):
        run.last_exception = "view raised:\n" + traceback.format_exc()[-3000:]

    got_request_exception.connect(remember)
    chosen = [g for g in args.groups.split(",") if g]
    share = sum(SHARES[g] for g in chosen)
    for name, (strategy, check) in groups(client, keys).items():
        if name in chosen:
            cases = max(1, round(args.cases * SHARES[name] / share))
            print(f"{name}: {cases} cases", flush=True)
            run_group(run, name, strategy, check, cases, args.seed)
    report(run, time.monotonic() - run.started)
    if run.failures:
        failed = sum(n for labels in run.labels.values() for label, n in labels.items() if label.startswith("FAILED"))
        print(f"\nFAILED: {failed} case(s), {len(run.failures)} kind(s) of failure; the first cases of each:")
        for kind, examples in run.failures.items():
            print(f"\n=== {kind}")
            for example in examples:
                print(example)
        return 1
    print("\nOK: no undocumented answer, no 5xx but a documented 503")
    return 0


if __name__ == "__main__":
    sys.exit(main())
