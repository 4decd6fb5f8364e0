import json
from datetime import datetime, timedelta, timezone

from django.core.management.base import BaseCommand, CommandError

from analysis.errors import AnalysisError
from analysis.incidents import documents, headlines
from analysis.models import Incident
from analysis.windows import parse_instant
from projects.models import Project
from store.reasons import Reason

DEFAULT_WINDOW = timedelta(hours=24)


class Command(BaseCommand):
    help = "List a service's stored incidents overlapping a window (default: the last 24 h), oldest first."

    def add_arguments(self, parser):
        parser.add_argument("--service", required=True, help="service.name of the spans")
        parser.add_argument("--project", default="", help="project name (needed when there are several)")
        parser.add_argument("--start", default="", help="ISO 8601 instant (naive means UTC); default: --end - 24 h")
        parser.add_argument("--end", default="", help="ISO 8601 instant, after --start; default: now")
        parser.add_argument("--route", default="", help="incidents of this llm.route (and service-wide ones)")
        parser.add_argument("--tenant", default="", help="incidents concerning this tenant.id")
        parser.add_argument("--format", choices=("json", "text"), default="text", dest="output_format")

    def handle(self, *args, service, project, start, end, route, tenant, output_format, **options):
        try:
            proj = _project(project)
            until = parse_instant(end, "end") if end else datetime.now(timezone.utc)
            since = parse_instant(start, "start") if start else until - DEFAULT_WINDOW
            doc = documents.window_document(proj.pk, service, since, until,
                                            lambda i: headlines.incident_url(i, proj.name), route=route, tenant=tenant)
        except AnalysisError as exc:
            if output_format == "json":  # the same error document as the API, then a failing exit status
                self.stdout.write(json.dumps({"error": exc.reason, "message": exc.message}))
            raise CommandError(f"{exc.reason}: {exc.message}") from None
        if output_format == "json":
            self.stdout.write(json.dumps(doc, indent=2))
        else:
            self.stdout.write("\n".join(text_lines(doc, proj)))


def _project(name: str) -> Project:
    """The named project; without a name, the only one (AnalysisError when there are none or several)."""
    if name:
        found = Project.objects.filter(name=name).first()
        if found is None:
            raise AnalysisError(Reason.NOT_FOUND, f"no project named {name!r}")
        return found
    projects = list(Project.objects.order_by("name")[:2])
    if len(projects) != 1:
        raise AnalysisError(Reason.MISSING_PARAMETER, "name the project with --project" if projects else "no project yet")
    return projects[0]


def text_lines(doc: dict, project: Project) -> list[str]:
    """One block per incident: when, how long, verdict, top causes, scope, peak vs baseline, link."""
    lines = [f"{doc['service']}: {len(doc['incidents'])} incident(s) overlapping {doc['start']} – {doc['end']}"]
    if doc["pending"]:  # an empty list is not "none" until the window is judged to its end
        lines.append(f"  not judged yet after {doc['judged_until'][11:16]} UTC: {doc['pending']} minute(s) with "
                     f"traffic pending")
    elif not doc["incidents"]:
        lines.append("  none: every minute with traffic is judged")
    if doc["no_baseline"]["minutes"]:
        lines.append(f"  {doc['no_baseline']['minutes']} judged minute(s) had no baseline: "
                     f"{doc['no_baseline']['reason']}")
    rows = Incident.objects.in_bulk([i["id"] for i in doc["incidents"]])
    for item in doc["incidents"]:
        row = rows[item["id"]]
        causes = ", ".join(headlines.cause_text(c) for c in row.causes[:3]) or "none named"
        scope = ", ".join(headlines.scope_item(s) for s in row.scope[:3]) or "service-wide"
        lines += ["", f"#{row.pk} {item['start']} → {item['end'] or 'ongoing'} ({headlines.duration_text(row)})",
                  f"  verdict:  {row.verdict}{f'  (route {row.route})' if row.route else ''}",
                  f"  causes:   {causes}", f"  scope:    {scope}",
                  f"  peak:     {headlines.peak_text(row)}", f"  page:     {item['url']}"]
    return lines
