"""The dashboard's filters (project, service, route, tenant, time range), read from and written to the URL
so any view can be shared as a link."""
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from urllib.parse import urlencode

from analysis.windows import check_window, iso, parse_instant
from analysis.errors import AnalysisError

RANGES = {"15m": timedelta(minutes=15), "1h": timedelta(hours=1), "6h": timedelta(hours=6),
          "24h": timedelta(hours=24), "7d": timedelta(days=7)}
DEFAULT_RANGE = "1h"


@dataclass(frozen=True)
class Filters:
    project: str
    service: str
    route: str
    tenant: str
    range: str  # a RANGES key, or "" when start and end were given
    start: datetime
    end: datetime
    error: str = ""  # why the requested window was replaced by the default one

    def query(self, **changes) -> str:
        """The query string of these filters, with `changes` applied (a "" value drops the key)."""
        f = replace(self, **{k: v for k, v in changes.items() if k in self.__dataclass_fields__})
        extra = {k: v for k, v in changes.items() if k not in self.__dataclass_fields__}
        return urlencode({k: v for k, v in {**dict(f.pairs()), **extra}.items() if v}, safe=":")

    def pairs(self) -> list[tuple[str, str]]:
        """The filters as query keys and values (empty ones left out): a form's hidden inputs carry them."""
        pairs = {"project": self.project, "service": self.service, "route": self.route, "tenant": self.tenant}
        if self.range:
            pairs["range"] = self.range
        else:
            pairs["start"], pairs["end"] = iso(self.start), iso(self.end)
        return [(k, v) for k, v in pairs.items() if v]

    @property
    def window_label(self) -> str:
        return f"{self.start:%Y-%m-%d %H:%M} – {self.end:%Y-%m-%d %H:%M} UTC"


def now_minute() -> datetime:
    """Now, rounded up to the next minute, so the window includes what arrived this minute."""
    now = datetime.now(timezone.utc)
    return now.replace(second=0, microsecond=0) + timedelta(minutes=1)


def window(params) -> tuple[str, datetime, datetime, str]:
    """(range, start, end, error) from ?range= or ?start=&end=; a bad window falls back to the default."""
    if params.get("start") or params.get("end"):
        try:
            start, end = parse_instant(params.get("start"), "start"), parse_instant(params.get("end"), "end")
            check_window(start, end)
            return "", start, end, ""
        except AnalysisError as exc:
            error = exc.message
    else:
        error = ""
    name = params.get("range", DEFAULT_RANGE)
    if name not in RANGES:
        error, name = f"unknown range {name!r}: showing the last {DEFAULT_RANGE}", DEFAULT_RANGE
    end = now_minute()
    return name, end - RANGES[name], end, error


def from_request(request, project: str, service: str) -> Filters:
    """The filters of this request; `project` and `service` are already resolved (see dashboard.access)."""
    params = request.GET
    name, start, end, error = window(params)
    return Filters(project=project, service=service, route=params.get("route", ""), tenant=params.get("tenant", ""),
                   range=name, start=start, end=end, error=error)
