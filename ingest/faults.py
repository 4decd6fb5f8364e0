"""The fault switch of the ClickHouse-failure drill: inserts fail, as if ClickHouse were down, until a time.

`manage.py inject_fault --inserts-fail-for N` writes the time into the data dir, so it reaches the writer of
every process sharing it (no restart, no ClickHouse access needed); `--clear` ends it early.
"""
import time
from pathlib import Path

from django.conf import settings

from store import client
from store.reasons import Reason

FILE = "fault-inserts-fail-until"


def _path() -> Path:
    return Path(settings.DATA_DIR) / FILE


def inserts_fail_until() -> float | None:
    """Epoch seconds until which inserts are made to fail, None when the switch is off."""
    try:
        until = float(_path().read_text())
    except (OSError, ValueError):
        return None
    return until if until > time.time() else None


def set_inserts_fail(seconds: float) -> float:
    until = time.time() + seconds
    _path().write_text(f"{until:.3f}")
    return until


def clear() -> None:
    _path().unlink(missing_ok=True)


def check_inserts() -> None:
    """Raise the error a ClickHouse outage gives (no error code: transient) while the switch is on."""
    until = inserts_fail_until()
    if until is not None:
        raise client.ClickHouseError(Reason.UNAVAILABLE, f"fault switch: inserts fail for {until - time.time():.0f} s more")
