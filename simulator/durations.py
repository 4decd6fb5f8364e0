"""Durations on the command line: 90s, 30m, 1h, 45 (seconds)."""
import re

DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """'30m', '1h', '90s', '45' (seconds) -> seconds."""
    match = DURATION_RE.match(text.strip().lower())
    if not match:
        raise ValueError(f"duration must look like 90s, 30m or 1h, got {text!r}")
    return float(match[1]) * UNIT_SECONDS[match[2]]
