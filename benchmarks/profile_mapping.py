"""Where an INSERT's ClickHouse time goes: decoding the spooled records, the mapping SELECT, the INSERT, and each
mapped column alone (docs/ingest-performance.md, tenth session).

    .venv/bin/python benchmarks/profile_mapping.py [--spans 80000] [--columns]

On a temp data dir (embedded chDB) the bench's workload (benchmarks/payloads.py) goes through the request path into
the spool; its records are then read by each statement, best of 3, with the writer's settings (max_threads = 1).
--columns also times each column of ingest.mapping.COLUMNS alone over the same subqueries (against a SELECT of
project_id): what a column costs with the shared maps it needs.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embedded import embedded_store  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spans", type=int, default=80_000)
    p.add_argument("--columns", action="store_true")
    a = p.parse_args()
    with embedded_store("profile-mapping-", INGEST_PROJECT_SPANS_PER_SECOND="0"):
        return run(a)


def run(a) -> int:
    from payloads import build_bodies

    from profile_ingest import _key

    from ingest import inserts, mapping, pipeline
    from ingest.inserts import TRACES, _insert_settings
    from projects.models import Project
    from store import client

    project, _ = Project.objects.get_or_create(name="bench")
    key = _key(project)
    writer = pipeline.get_writer()
    writer._stop.set()  # the records stay in the spool: this script reads them
    for body in build_bodies(a.spans, 500):
        pipeline.export(key, body, "protobuf")
    writer.spool.rotate(force=True)
    paths = [s.path for s in writer.spool.claim_batch(1 << 40).segments]
    names = ",".join(p.name for p in paths)
    source = "file({path:String}, 'Protobuf', {structure:String})"
    params = {"path": f"{paths[0].parent}/{{{names}}}" if len(paths) > 1 else str(paths[0]),
              "structure": mapping.STRUCTURE, **inserts._limits()}
    settings = {k: v for k, v in _insert_settings("profile", TRACES).items() if k != "insert_deduplication_token"}
    insert = mapping.insert_sql(source)
    select = insert.split("\n", 1)[1]
    rest = select.partition("\nFROM\n")[2]

    def best(sql: str) -> float:
        took = []
        for _ in range(3):
            t = time.perf_counter()
            client.command(sql, parameters=params, settings=settings)
            took.append(time.perf_counter() - t)
        return min(took)

    def show(label: str, seconds: float) -> None:
        print(f"  {label:44s} {seconds * 1000:7,.0f} ms {seconds / a.spans * 1e6:6.1f} us/span", flush=True)

    print(f"{a.spans:,} spans in {len(paths)} spool segments")
    show("decode only (a count of spans)", best(
        f"SELECT sum(arraySum(x -> arraySum(y -> length(y.spans), x.scope_spans), resource_spans)) FROM {source} "
        "FORMAT Null"))
    show("the mapping SELECT, every column", best(select + " FORMAT Null"))
    t = time.perf_counter()
    client.command(insert, parameters=params, settings={**settings, "insert_deduplication_token": "profile"})
    show("the INSERT", time.perf_counter() - t)
    if a.columns:
        base = best(f"SELECT project_id\nFROM\n{rest} FORMAT Null")
        show("SELECT project_id over the subqueries", base)
        costs = [(best(f"SELECT {expr} AS {name}\nFROM\n{rest} FORMAT Null") - base, name)
                 for name, expr in mapping.COLUMNS.items()]
        for extra, name in sorted(costs, reverse=True):
            show(f"  + {name}", extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
