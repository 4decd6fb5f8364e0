"""The SLOs page's numbers: where each SLO stands at the end of the scope's window (compliance, error budget, the
share not measured, burn rates and the budget's burn-down over its own rolling window), from analysis.reads.slos,
the one reading of an SLO that GET /api/v1/slos, the weekly review and the slo_burn alert kind share.

The SLOs are the caller's (slos.models.Slo, or any object analysis.reads.slos.status takes): analysis imports no
app above it.
"""
from dataclasses import dataclass
from datetime import datetime

from analysis.reads import slos as slo_status
from analysis.reads.slos import Burn, SloStatus
from analysis.scope import Scope


@dataclass(frozen=True)
class SloNumbers:
    """One SLO: its status (SloStatus: shares 0..1, burn rates as ratios), not_measured ("not measured for 12% of
    requests", "" when every request was measured) and burn: (window, burn rate or None, measured requests) per
    analysis.reads.slos.BURN_WINDOWS."""
    slo: object
    status: SloStatus
    not_measured: str
    burn: list[tuple[str, float | None, int]]


@dataclass(frozen=True)
class Slos:
    """end: the instant the SLOs stand at; rows: per SLO, in the order given."""
    end: datetime
    rows: list[SloNumbers]


def build(scope: Scope, slos) -> Slos:
    """Each of `slos` (the scope's project's) over its rolling window ending at the scope's end; the scope's start,
    route and tenant do not apply (an SLO names its own)."""
    return Slos(end=scope.end, rows=[at(slo, scope.end) for slo in slos])


def at(slo, end: datetime) -> SloNumbers:
    """One SLO over its rolling window ending at `end`, with the burn rates of the windows ending then."""
    status = slo_status.status(slo, end)
    return SloNumbers(slo=slo, status=status, not_measured=slo_status.not_measured_text(status),
                      burn=[(w, status.burn.rates[w], status.burn.measured[w]) for w in slo_status.BURN_WINDOWS])


def burn(slo, end: datetime) -> Burn:
    """The burn rates only, over the windows ending at `end` (the last 6 hours read: what the slo_burn alert reads
    each minute)."""
    return slo_status.status(slo, end, window=False).burn
