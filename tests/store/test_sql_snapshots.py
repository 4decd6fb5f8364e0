"""Every query as ClickHouse receives it, fragments expanded, kept in tests/sql_snapshots/: a change to a shared
fragment (_window.sql, _current.sql, ...) shows in review in every query it lands in, not only in the fragment.

After changing a query or a fragment: `.venv/bin/python tests/store/test_sql_snapshots.py` rewrites the snapshots;
review their diff with the change."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "sql_snapshots"
DIRECTORIES = {"analysis": ROOT / "analysis" / "sql", "ingest": ROOT / "ingest" / "sql"}


def expanded() -> dict[str, str]:
    """{snapshot file name: the query's text as sent} for every query (not fragment) of every SQL directory."""
    sys.path.insert(0, str(ROOT))
    from store.sql import SqlFiles

    out = {}
    for prefix, directory in DIRECTORIES.items():
        files = SqlFiles(directory)
        for path in sorted(directory.glob("*.sql")):
            if not path.name.startswith("_"):
                out[f"{prefix}.{path.stem}.sql"] = files.text(path.stem).rstrip() + "\n"
    return out


def test_every_query_matches_its_snapshot():
    found = expanded()
    stale = sorted(name for name, text in found.items()
                   if not (SNAPSHOTS / name).exists() or (SNAPSHOTS / name).read_text() != text)
    orphans = sorted(p.name for p in SNAPSHOTS.glob("*.sql") if p.name not in found)
    assert not stale and not orphans, (
        f"snapshots out of date: {stale[:8]}{' ...' if len(stale) > 8 else ''}; without a query: {orphans[:8]}. "
        "Run .venv/bin/python tests/store/test_sql_snapshots.py and review the diff")


if __name__ == "__main__":
    SNAPSHOTS.mkdir(exist_ok=True)
    for old in SNAPSHOTS.glob("*.sql"):
        old.unlink()
    for name, text in expanded().items():
        (SNAPSHOTS / name).write_text(text)
    print(f"wrote {len(list(SNAPSHOTS.glob('*.sql')))} snapshots in {SNAPSHOTS}")
