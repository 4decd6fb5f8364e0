"""What an SLO stands at: compliance, error budget, burn rates and the budget's burn-down over its rolling window.

The one entry point, status(slo, now), is what the SLO page, GET /api/v1/slos, the slo_burn alert kind and the
weekly review read (through analysis/panels/slos.py). `slo` is any object with project_id, service, route, tenant,
signal ("ttft" or "total"), threshold_ms, objective (0.99) and window_days (slos.models.Slo): analysis imports no
app above it.

Counting (sql/slo_counts.sql): a request is one attempt of the service (each try, as every percentile of the
product counts them), on the SLO's route and tenant when it names them, queued in the window. It is
- good when it succeeded and its signal is under the threshold;
- bad when its signal is at or over the threshold, or when it failed (a failed try never kept the promise);
- not measured when it succeeded but its span form cannot give the signal (TTFT of a non-streaming call): neither
  good nor bad, and reported as "not measured for N % of requests", never as good.
The counts are exact: every attempt of the window is read with the SLO's own threshold (analysis/reads/slo_counts.py,
which keeps the counts of settled hours so a page does not read 30 days each time).

compliance = good / measured; error budget remaining = 1 - bad / allowed, allowed = (1 - objective) * measured
(below 0: overspent). A burn rate is the bad share of a window over the allowed share: 1 spends the budget exactly
over the SLO's window, 14.4 spends 2 % of a 30-day budget in an hour. Whatever has no measured request is None.
"""
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis.reads.slo_counts import MINUTE, Counts, per_hour, per_minute, total
from analysis.rollups.aggregates import HOUR, floor_hour
from analysis.windows import utc_naive
from analysis.wording import fmt
from store.concurrent import gather

SIGNALS = ("ttft", "total")
# the burn-rate windows the alerts and pages read, ending now
BURN_WINDOWS = {"5m": timedelta(minutes=5), "30m": timedelta(minutes=30), "1h": timedelta(hours=1),
                "6h": timedelta(hours=6)}
RECENT = BURN_WINDOWS["6h"]


@dataclass(frozen=True)
class Condition:
    """One multiwindow burn-rate condition (Google SRE workbook, "Alerting on SLOs", table 5-8): both windows burn
    at `factor` or more. The short window makes it stop soon after the burning stops."""
    name: str
    long: str
    short: str
    factor: float


# 14.4 over 1 h spends 14.4 / 720 = 2 % of a 30-day budget; 6 over 6 h spends 6 * 6 / 720 = 5 %
PAGES = (Condition("fast", "1h", "5m", 14.4), Condition("slow", "6h", "30m", 6.0))


def compliance(counts: Counts) -> float | None:
    """good / measured; None without a measured request."""
    return counts.good / counts.measured if counts.measured else None


def budget_remaining(counts: Counts, objective: float) -> float | None:
    """1 - bad / allowed (negative: overspent); None without a measured request."""
    allowed = (1 - objective) * counts.measured
    return 1 - counts.bad / allowed if allowed else None


def burn_rate(counts: Counts, objective: float) -> float | None:
    """The bad share over the allowed share (1: the budget lasts exactly the window); None without a measured
    request. TRICKY: rounded to 9 decimals, so 144 bad of 1,000 at 0.99 is 14.4 and pages (1 - 0.99 is
    0.010000000000000009 in floating point: unrounded, exactly 14.4x would read 14.39999999999998 and stay silent)."""
    if not counts.measured:
        return None
    return round(counts.bad / counts.measured / (1 - objective), 9)


def unmeasured_share(counts: Counts) -> float | None:
    """The share of requests whose signal is not measured; None without requests."""
    return counts.unmeasured / counts.requests if counts.requests else None


@dataclass(frozen=True)
class Burn:
    """Burn rates over the BURN_WINDOWS ending at `end`, the measured requests of each, and the PAGES that hold."""
    end: datetime
    rates: dict[str, float | None]
    measured: dict[str, int]
    paging: tuple[str, ...]

    def value(self) -> dict:
        """What the slo_burn alert stores and sends: {"5m": rate, ..., "paging": [page names]}."""
        return {**self.rates, "paging": list(self.paging)}


@dataclass(frozen=True)
class SloStatus:
    """An SLO over its window [start, end) (aware UTC). counts, compliance, budget and burn_down are None or empty
    when only the burn rates were asked for."""
    start: datetime
    end: datetime
    objective: float
    burn: Burn
    counts: Counts | None = None
    burn_down: list[tuple[datetime, float | None]] = field(default_factory=list)
    note: str = ""  # what the numbers cannot cover (a window longer than the store keeps)

    @property
    def compliance(self) -> float | None:
        return compliance(self.counts) if self.counts is not None else None

    @property
    def budget_remaining(self) -> float | None:
        return budget_remaining(self.counts, self.objective) if self.counts is not None else None

    @property
    def unmeasured_share(self) -> float | None:
        return unmeasured_share(self.counts) if self.counts is not None else None


def status(slo, now: datetime, *, window: bool = True) -> SloStatus:
    """The SLO at `now`: its rolling window [now - window_days, now) (compliance, budget remaining, the share not
    measured, the budget remaining at the end of each hour of the window) and the burn rates of the windows ending
    at `now`. window=False reads the burn rates only (the last 6 hours, what an alert needs each minute)."""
    _check(slo)
    end = now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now.astimezone(timezone.utc)  # naive: UTC
    start = end - timedelta(days=slo.window_days)
    if not window:
        return SloStatus(start, end, slo.objective, burn=_burn(slo, end))
    hours, burn = gather(lambda: per_hour(slo, start, end), lambda: _burn(slo, end))
    counts = total(hours.values())
    return SloStatus(start, end, slo.objective, burn=burn, counts=counts,
                     burn_down=_burn_down(hours, start, end, slo.objective, counts), note=_note(slo))


def not_measured_text(status_: SloStatus) -> str:
    """"not measured for 12% of requests", "" when every request was measured (or there were none)."""
    share = status_.unmeasured_share
    return f"not measured for {fmt(share, '%')} of requests" if share else ""


def as_json(status_: SloStatus) -> dict:
    """The numbers of a status as the API answers them: shares 0..1, burn rates as ratios, times ISO 8601."""
    counts = status_.counts
    return {
        "start": status_.start.isoformat(), "end": status_.end.isoformat(),
        "requests": None if counts is None else {"good": counts.good, "bad": counts.bad,
                                                 "not_measured": counts.unmeasured},
        "compliance": status_.compliance, "budget_remaining": status_.budget_remaining,
        "not_measured_share": status_.unmeasured_share, "not_measured": not_measured_text(status_) or None,
        "burn_rates": status_.burn.rates, "burn_measured": status_.burn.measured,
        "paging": list(status_.burn.paging),
        "burn_down": [{"at": at.isoformat(), "budget_remaining": left} for at, left in status_.burn_down],
        "note": status_.note or None,
    }


def _check(slo) -> None:
    # the signal picks a column (sql/_slo_signal.sql): refuse anything else before a query runs
    if slo.signal not in SIGNALS:
        raise ValueError(f"unknown SLO signal {slo.signal!r}: one of {', '.join(SIGNALS)}")
    if not 0 < slo.objective < 1:
        raise ValueError(f"an SLO's objective is a share between 0 and 1, got {slo.objective!r}")


def _burn(slo, end: datetime) -> Burn:
    """Burn rates over BURN_WINDOWS ending at `end`, from one read of the last 6 hours per minute."""
    minutes = per_minute(slo, end - RECENT, end)
    last = int(RECENT / MINUTE)  # the index of the minute after the window
    rates, measured = {}, {}
    for name, length in BURN_WINDOWS.items():
        counts = total(c for i, c in minutes.items() if i >= last - int(length / MINUTE))
        rates[name], measured[name] = burn_rate(counts, slo.objective), counts.measured
    paging = tuple(p.name for p in PAGES if all(rates[w] is not None and rates[w] >= p.factor for w in (p.long, p.short)))
    return Burn(end, rates, measured, paging)


def _burn_down(hours: dict[datetime, Counts], start: datetime, end: datetime, objective: float,
               counts: Counts) -> list[tuple[datetime, float | None]]:
    """(end of each clock hour of the window, cut at `end`; the budget remaining then): the window's allowed bad
    requests (from all its measured ones) less the bad ones so far, so the last point is the window's budget
    remaining. All None without a measured request."""
    allowed = (1 - objective) * counts.measured
    points, bad, hour = [], 0, floor_hour(utc_naive(start))
    while hour < utc_naive(end):
        bad += hours.get(hour, Counts()).bad
        hour += HOUR
        at = min(hour.replace(tzinfo=timezone.utc), end)
        points.append((at, 1 - bad / allowed if allowed else None))
    return points


def _note(slo) -> str:
    kept = settings.CLICKHOUSE_RETENTION_DAYS
    if slo.window_days <= kept:
        return ""
    return f"the store keeps {kept} days (CLICKHOUSE_RETENTION_DAYS): the window's first {slo.window_days - kept} are gone"
