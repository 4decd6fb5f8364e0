"""A migration applied anywhere must never change: `up` on an existing data dir refuses a migration whose checksum
differs from the one it applied. tests/store/released_migrations.txt lists each migration's checksum as released;
a new migration is added to it (`.venv/bin/python tests/store/test_released_migrations.py`), an edited one fails here
instead of on users' data dirs (a mass rename once rewrote comments of 16 applied migrations)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASED = Path(__file__).with_name("released_migrations.txt")


def current() -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    from store.migrate import load_migrations

    return {f"{m.version:04d}_{m.name}": m.checksum for m in load_migrations()}


def released() -> dict[str, str]:
    text = RELEASED.read_text() if RELEASED.exists() else ""
    return dict(line.split() for line in text.splitlines() if line.strip())


def test_no_released_migration_was_edited_or_removed():
    now, before = current(), released()
    changed = sorted(name for name, checksum in before.items() if now.get(name) != checksum)
    assert not changed, f"released migrations edited or removed: {changed}; add a new migration instead"


def test_every_migration_is_listed():
    unlisted = sorted(set(current()) - set(released()))
    assert not unlisted, f"not in {RELEASED.name}: {unlisted}; run .venv/bin/python {Path(__file__).relative_to(ROOT)}"


if __name__ == "__main__":
    listed = {**current(), **released()}  # a released checksum is never rewritten here
    RELEASED.write_text("".join(f"{name} {checksum}\n" for name, checksum in sorted(listed.items())))
    print(f"{len(listed)} migrations in {RELEASED}")
