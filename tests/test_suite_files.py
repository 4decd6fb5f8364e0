"""The suite's own lists of files (tests/conftest.py): a file renamed or removed must leave them too, or a renamed
slow file would silently join `make test-fast` and a heavy one lose its place at the start of `make test`."""
from pathlib import Path

from tests.conftest import HEAVY_FILES, SLOW_FILES

ROOT = Path(__file__).resolve().parent.parent


def test_every_listed_file_exists():
    missing = sorted(name for name in {*HEAVY_FILES, *SLOW_FILES} if not (ROOT / name).is_file())
    assert not missing, missing
