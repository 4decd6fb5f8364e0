"""ISO weeks as "YYYY-Www" and their [Monday 00:00, next Monday 00:00) bounds in a timezone."""
import re
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

WEEK_RE = re.compile(r"^(\d{4})-W(\d{2})$")


def parse(week: str) -> tuple[int, int]:
    m = WEEK_RE.match(week or "")
    if not m:
        raise ValueError(f'week must look like 2026-W02, got {week!r}')
    year, number = int(m[1]), int(m[2])
    try:
        date.fromisocalendar(year, number, 1)
    except ValueError:
        raise ValueError(f"{week!r} is not a week of {year}") from None
    return year, number


def bounds(week: str, tz_name: str = "UTC") -> tuple[datetime, datetime]:
    """(start, end) aware UTC; both Mondays are localised separately, so a DST change is honoured."""
    year, number = parse(week)
    tz = ZoneInfo(tz_name)
    monday = date.fromisocalendar(year, number, 1)
    start = datetime.combine(monday, time(0), tzinfo=tz)
    end = datetime.combine(monday + timedelta(days=7), time(0), tzinfo=tz)
    return start.astimezone(timezone.utc), end.astimezone(timezone.utc)


def name(day: date) -> str:
    year, number, _ = day.isocalendar()
    return f"{year}-W{number:02d}"


def previous(week: str) -> str:
    year, number = parse(week)
    return name(date.fromisocalendar(year, number, 1) - timedelta(days=7))


def last_complete(now: datetime, tz_name: str = "UTC") -> str:
    """The week before the one `now` falls in, in that timezone."""
    return name(now.astimezone(ZoneInfo(tz_name)).date() - timedelta(days=7))
