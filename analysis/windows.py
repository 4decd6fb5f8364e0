"""Windows of time, defined once: parsing and checking what users ask for, the periodic jobs' windows,
and the two spellings the store and the web use (naive UTC for DateTime64 parameters, ISO 8601 with Z).
"""
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis.errors import AnalysisError
from store.reasons import Reason

DEFAULT_MAX_WINDOW_DAYS = 31
RECENT = timedelta(minutes=15)  # the window of the minute jobs (diagnosis, budgets, alert rules)


def parse_instant(value: str | None, name: str) -> datetime:
    """An ISO 8601 instant (Z or an offset; naive means UTC) as an aware UTC datetime, or AnalysisError."""
    if not value:
        raise AnalysisError(Reason.MISSING_PARAMETER, f"'{name}' is required (an ISO 8601 instant)")
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise AnalysisError(Reason.BAD_DATE, f"'{name}' is not an ISO 8601 instant: {value!r}") from None


def check_window(start: datetime, end: datetime) -> None:
    """Refuse an empty or reversed window and one longer than ANALYSIS_MAX_WINDOW_DAYS (default 31)."""
    if end <= start:
        raise AnalysisError(Reason.BAD_DATE, "'end' must be after 'start'")
    days = getattr(settings, "ANALYSIS_MAX_WINDOW_DAYS", DEFAULT_MAX_WINDOW_DAYS)
    if end - start > timedelta(days=days):
        raise AnalysisError(Reason.WINDOW_TOO_LARGE, f"the window may span at most {days} days")


def utc_naive(moment: datetime) -> datetime:
    """`moment` as a naive UTC datetime (what DateTime64(9, 'UTC') parameters take); naive means UTC."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def recent_window(now: datetime) -> tuple[datetime, datetime]:
    """The last RECENT, aligned to whole minutes so reruns within a minute replace each other."""
    end = now.replace(second=0, microsecond=0)
    return end - RECENT, end


def last_full_hour(now: datetime) -> tuple[datetime, datetime]:
    end = now.replace(minute=0, second=0, microsecond=0)
    return end - timedelta(hours=1), end


def iso(t: datetime) -> str:
    """`t` as ISO 8601 UTC with a Z, to the second (URLs, messages)."""
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
