"""Reading stored incidents across a project's services: the Incidents page, the bands on time axes, the
Overview's open incidents, alert rules and the weekly review. (One service's incidents for the API:
records.incidents_overlapping.) PostgreSQL only: no ClickHouse read here.
"""
from datetime import datetime

from django.db.models import F, Q

from analysis.models import Incident

LIST_LIMIT = 200  # rows on the Incidents page: open ones always come first, so they are never cut


def overlapping(project_id: int, start: datetime, end: datetime, service: str = ""):
    """The project's incidents (of `service`, or of every service for "") overlapping [start, end); an open one
    reaches to now. A queryset, unordered."""
    rows = Incident.objects.filter(project_id=project_id, start__lt=end).filter(Q(end__isnull=True) | Q(end__gt=start))
    return rows.filter(service=service) if service else rows


def project_list(project_id: int, start: datetime, end: datetime, service: str = "",
                 limit: int = LIST_LIMIT) -> list[Incident]:
    """The Incidents page's rows: open ones first, then the newest onset first; at most `limit`."""
    rows = overlapping(project_id, start, end, service).select_related("project")
    return list(rows.order_by(F("end").desc(nulls_first=True), "-start", "-id")[:limit])


def in_window(project_id: int, service: str, start: datetime, end: datetime) -> list[Incident]:
    """One service's incidents overlapping [start, end), oldest first (the bands on a page's time axes)."""
    return list(overlapping(project_id, start, end, service).order_by("start", "id"))


def open_by_service(project_id: int, services: list[str]) -> dict[str, Incident]:
    """service -> its open incident (the earliest onset when several routes have one), for those with one."""
    found: dict[str, Incident] = {}
    for row in Incident.objects.filter(project_id=project_id, service__in=services, end__isnull=True).order_by("start"):
        found.setdefault(row.service, row)
    return found


def open_services(project_id: int) -> list[str]:
    """The project's services with an open incident, by name."""
    rows = Incident.objects.filter(project_id=project_id, end__isnull=True).values_list("service", flat=True)
    return sorted(set(rows))
