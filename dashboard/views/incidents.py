"""Incidents: the project's incidents across services (open first, then newest), and one incident's page."""
from dataclasses import replace

from django.http import HttpResponsePermanentRedirect
from django.views.decorators.http import require_GET

from analysis.incidents import reads
from analysis.incidents.headlines import incident_path
from analysis.models import Incident, RetiredIncident
from analysis.panels import incidents as numbers
from dashboard import incidents as incidents_
from dashboard.access import page
from dashboard.filters import now_minute


@require_GET
@page(needs_service=False)  # a service without traffic in the window may still have an open incident
def incidents(request, page):
    service = request.GET.get("service", "")  # explicit only: the list spans every service by default
    found = numbers.build(replace(page.scope, service=service, route="", tenant=""))
    return page.render("dashboard/incidents.html", {
        "rows": [incidents_.row(i, now_minute()) for i in found.incidents], "service": service,
        "limit": reads.LIST_LIMIT, "open_count": found.open_count, "all_services": page.filters.query(service=""),
        "unjudged": found.unjudged})


@require_GET
@page(needs_service=False, ahead=())  # its filters become the incident's (page_context): nothing to read ahead
def incident(request, page, incident_id):
    # only the page's project, whose membership `page` has checked: another project's incident is a 404
    found = Incident.objects.select_related("project").filter(pk=incident_id, project=page.project).first()
    if found is not None:
        return page.render("dashboard/incident.html", incidents_.page_context(page, found))
    retired = RetiredIncident.objects.filter(pk=incident_id, project=page.project).first()
    if retired is not None and retired.merged_into is not None:  # a link must not die: to the one it joined
        return HttpResponsePermanentRedirect(incident_path(retired.merged_into, page.project.name))
    return page.render("dashboard/incident_gone.html", {"retired": retired, "incident_id": incident_id},
                       status=410 if retired else 404)
