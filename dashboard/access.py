"""Who sees what: every dashboard view runs through `page`, which logs the user in, resolves a project
they belong to (404 for any other, as for a made-up name) and the service, and builds the filters."""
import logging
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import cached_property, wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from analysis.reads import coverage as coverage_
from analysis.reads import lookups, versions
from analysis.reads.ahead import start as start_reading_ahead
from analysis.rollups import aggregates, freshness
from analysis.rollups.freshness import Freshness
from analysis.scope import Scope
from dashboard import filters as filters_
from projects import membership
from projects.errors import AccessError
from projects.membership import visible_projects
from projects.models import Project
from store.concurrent import beside
from store.errors import TIMEOUT_EXCEEDED, ClickHouseError

log = logging.getLogger(__name__)


def member_project(user, name: str) -> Project | None:
    """The named project if the user may see it (404 otherwise); without a name, their first; None: no project.
    The rule is projects.membership's, shared with the read API."""
    try:
        return membership.member_project(user, name)
    except AccessError:
        raise Http404("no such project") from None


@dataclass
class Page:
    """What every dashboard page knows: the project, the service picker's choices in the window, the filters.

    The pickers list at most DASHBOARD_PICKER_LIMIT values (the busiest, or those containing ?service_q= /
    ?route_q=) plus the selected one, whatever the number of services or routes."""
    request: object
    project: Project
    projects: list
    services: lookups.Choices
    filters: filters_.Filters
    service_q: str = ""
    service_missed: bool = False  # no service contains service_q: the busiest are listed instead
    fresh: Freshness = Freshness()  # what freshness.refresh() found before the page's reads
    # the page's own reads (routes, coverage) started beside the view's by read_ahead(): name -> (the filters they
    # were read with, their answer to come)
    ahead: dict[str, tuple[filters_.Filters, Future]] = field(default_factory=dict)

    @property
    def project_query(self) -> str:
        """"?project=<name>": where a management page's forms post back and redirect to (the same project)."""
        return "?" + urlencode({"project": self.project.name})

    @property
    def scope(self) -> Scope:
        """What the page's numbers are about (analysis/panels): the project and the filters' service, window, route
        and tenant, as they are now."""
        f = self.filters
        return Scope(self.project.pk, f.service, f.start, f.end, route=f.route, tenant=f.tenant)

    def kept(self, build, also: tuple = (), **options):
        """build(self.scope, **options), the page's numbers, kept while the window's data is unchanged
        (analysis/reads/versions.py): a reload, or another member on the same window, does not read them again.
        `also`: what else they depend on that the store does not hold (a project's objective or cost)."""
        return versions.kept(f"{build.__module__}.{build.__qualname__}", self.scope, (sorted(options.items()), also),
                             lambda scope: build(scope, **options))

    @property
    def route_q(self) -> str:
        return self.request.GET.get("route_q", "").strip()

    @cached_property
    def routes(self) -> lookups.Choices:
        """The selected service's route picker (read only by pages that draw it)."""
        return self._early("routes", self._routes)

    @cached_property
    def coverage(self) -> dict | None:
        """What the selected service's spans measure in the window (analysis.reads.coverage): the strip every service page
        shows (templates/dashboard/_coverage.html), read once per page; None without a service."""
        return self._early("coverage", self._coverage)

    def _early(self, name: str, read):
        """read_ahead()'s answer for `name` when it was read with the page's filters as they are now, else
        read(filters) (nothing read ahead, or the view changed the filters since)."""
        filters, answer = self.ahead.get(name, (None, None))
        return answer.result() if answer is not None and filters == self.filters else read(self.filters)

    def _routes(self, f: filters_.Filters) -> lookups.Choices:
        if not f.service:
            return lookups.Choices(values=[], matching=0)
        return lookups.route_choices(Scope(self.project.pk, f.service, f.start, f.end), q=self.route_q,
                                     selected=f.route, limit=settings.DASHBOARD_PICKER_LIMIT)

    def _coverage(self, f: filters_.Filters) -> dict | None:
        if not f.service:
            return None
        return coverage_.coverage(Scope(self.project.pk, f.service, f.start, f.end, route=f.route, tenant=f.tenant))

    @property
    def busiest(self) -> list[dict]:
        """The services in the picker that had attempts in the window ({"value", "requests"}), busiest first."""
        return [v for v in self.services.values if v["requests"] is not None]

    def render(self, template: str, context: dict | None = None, status: int = 200):
        context = {"page": self, "f": self.filters, "ranges": filters_.RANGES, **(context or {})}
        return render(self.request, template, context, status=status)


def page(view=None, *, needs_service: bool = True, ahead: tuple[str, ...] | None = None):
    """Decorator: view(request, page: Page). Without a project: the no-project page. With needs_service and
    no traffic in the window: the empty state (how to send spans, and a link to the latest data). A read the
    store did not answer (past CLICKHOUSE_QUERY_TIMEOUT_SECONDS, or ClickHouse down) gives an error box, 503.

    `ahead`: the page's own reads the view's template draws, read beside the view's reads instead of after them
    (read_ahead); by default the route picker, and the coverage strip of the pages that need a service. They are
    read with the filters of the request, and read again if the view changed page.filters since; a view that always
    does (a stored diagnosis window, an incident's service and window) passes ahead=() to save the read."""
    ahead = (("routes", "coverage") if needs_service else ("routes",)) if ahead is None else ahead

    def decorate(view):
        @login_required
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            project = member_project(request.user, request.GET.get("project", ""))
            if project is None:
                return render(request, "dashboard/no_project.html", status=200)
            try:
                return _serve(view, needs_service, ahead, request, project, *args, **kwargs)
            except ClickHouseError as exc:
                return store_error(request, project, exc)
        return wrapper
    return decorate(view) if view else decorate


def _serve(view, needs_service: bool, ahead: tuple[str, ...], request, project: Project, *args, **kwargs):
    f = filters_.from_request(request, project.name, "")
    fresh = freshness.refresh(project.pk, f.start, f.end)  # before any read: the picker's counts too
    start_reading_ahead()
    # a page's reads ask its window's core (and the core's counts) once; what it keeps is read ahead of its next view
    with aggregates.shared_reads(), versions.watching(lagging=fresh.left > 0):
        requested, q = request.GET.get("service", ""), request.GET.get("service_q", "").strip()
        choices, missed = _service_choices(project, f, requested, q)
        service = requested or next(iter(choices.values), {}).get("value", "")
        current = Page(request, project, list(visible_projects(request.user)), choices, replace(f, service=service),
                       service_q=q, service_missed=missed, fresh=fresh)
        if needs_service and not current.busiest:
            return empty_state(current)
        with read_ahead(current, ahead):
            return view(request, current, *args, **kwargs)


def read_ahead(current: Page, names: tuple[str, ...]) -> ExitStack:
    """Start the page's reads `names` (Page.routes, Page.coverage) on the reader threads (store/concurrent.py) for
    the block, so they overlap the view's own reads on the machine's cores instead of following them when the
    template draws them; the block's end waits for them. Nothing to read without a service."""
    stack = ExitStack()
    f = current.filters  # read with these, whatever the view sets page.filters to meanwhile
    for name in names if f.service else ():
        read = getattr(current, f"_{name}")
        current.ahead[name] = (f, stack.enter_context(beside(lambda read=read: read(f))))
    return stack


def _service_choices(project: Project, f, requested: str, q: str) -> tuple[lookups.Choices, bool]:
    """The service picker, and whether a search found nothing (then the busiest services are offered)."""
    scope, limit = Scope(project.pk, "", f.start, f.end), settings.DASHBOARD_PICKER_LIMIT
    choices = lookups.service_choices(scope, q=q, selected=requested, limit=limit)
    if q and not choices.matching:
        return lookups.service_choices(scope, selected=requested, limit=limit), True
    return choices, False


def store_error(request, project: Project, exc: ClickHouseError):
    """The error box, 503: the page's reads were stopped (a long window) or the store did not answer."""
    timed_out = exc.code == TIMEOUT_EXCEEDED
    if not timed_out:
        log.error("dashboard read failed: %s", exc, exc_info=exc)
    context = {"project": project.name, "timed_out": timed_out, "timeout_s": settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS}
    return render(request, "dashboard/store_error.html", context, status=503)


def empty_state(current: Page):
    """No traffic in the window: say how to send spans, and where the latest data is if there is any."""
    latest = lookups.latest_request(current.project.pk)
    latest_link = None
    if latest is not None:
        start = latest.replace(second=0, microsecond=0) - filters_.RANGES["1h"] + timedelta(minutes=1)
        latest_link = current.filters.query(range="", start=start, end=start + filters_.RANGES["1h"])
    otlp_url = current.request.build_absolute_uri("/v1/traces")
    return current.render("dashboard/empty.html", {"latest": latest, "latest_link": latest_link, "otlp_url": otlp_url})
