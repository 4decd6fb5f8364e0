"""How the periodic jobs share their time: a time budget per run, and projects served in turns.

Every periodic job works in small units (a project's dirty hour, a service to diagnose, a budget, an alert
rule). A run hands out one unit per project per turn, projects in the order given (the callers put the
projects whose work waited longest first), and starts no unit once the next would not fit the run's budget.
One project with 100,000 services therefore gets one unit in each turn like any other project and delays
only itself; what a run leaves is done first by the next one (the callers keep it queued or ordered by age).
"""
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

log = logging.getLogger(__name__)


class Deadline:
    """A run's time budget in seconds, on a monotonic clock (a fake one in tests).

    fits() allows the next unit while the time spent plus the mean unit so far stays within the budget, so a
    run ends about when its budget does, not one long unit after it. None as seconds means no limit. `last_start`
    is the time spent when fits() last allowed a unit (None: none allowed), so a run's report can show that no
    unit began past the budget, whatever the last one took.
    """

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.started = clock()
        self.units, self.unit_seconds = 0, 0.0
        self.last_start: float | None = None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def fits(self) -> bool:
        elapsed = self.elapsed()
        if self.seconds is not None:
            mean = self.unit_seconds / self.units if self.units else 0.0
            if elapsed + mean > self.seconds:
                return False
        self.last_start = elapsed
        return True

    def record(self, seconds: float) -> None:
        self.units += 1
        self.unit_seconds += seconds


def step_deadline(step: str) -> Deadline:
    """A Deadline of the minute pipeline step's budget (PIPELINE_STEP_BUDGET_SECONDS: materialize, diagnose, incidents,
    budgets, alert_rules), started now; the steps' tasks run alone get the same budget."""
    return Deadline(settings.PIPELINE_STEP_BUDGET_SECONDS[step])


@dataclass
class Tally:
    """What a run did: units done per outcome label (a verdict, "materialized", …) and units that raised."""

    outcomes: Counter = field(default_factory=Counter)
    errors: int = 0

    @property
    def done(self) -> int:
        return sum(self.outcomes.values())


def round_robin(queues: Iterable[Iterator]) -> Iterator:
    """One item of each queue in turn, in the order given, until every queue is empty. Queues are iterated
    lazily, so a queue that pages its rows from the database reads only what the run gets to."""
    turn = deque(queues)
    while turn:
        queue = turn.popleft()
        for item in queue:
            yield item
            turn.append(queue)
            break


def by_project(items: Iterable) -> list[Iterator]:
    """The items (with a project_id) as one queue per project, in their order, projects by their first item."""
    queues: dict[int, list] = {}
    for item in items:
        queues.setdefault(item.project_id, []).append(item)
    return [iter(q) for q in queues.values()]


def run_in_turns(queues: Iterable[Iterator], work: Callable[[object], str], deadline: Deadline, what: str) -> Tally:
    """Call work(item) for the items of `queues` in turns (round_robin) while the deadline allows another.

    work returns the unit's outcome label. A unit that raises is logged with its traceback and counted in
    Tally.errors, and the others go on: one project's failing service (a query timeout on a flood) must not
    stop the rest. The task's own time limit (SoftTimeLimitExceeded) still ends the run.
    """
    tally = Tally()
    for item in round_robin(queues):
        if not deadline.fits():
            break
        began = deadline.clock()
        try:
            tally.outcomes[work(item)] += 1
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # counted and logged; the caller's summary carries `errors`, the pipeline fails loudly
            log.exception("%s: unit %r failed", what, item)
            tally.errors += 1
        deadline.record(deadline.clock() - began)
    return tally
