import csv
import json
from datetime import datetime, timedelta, timezone
from urllib.parse import urlencode

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis import capacity
from analysis.capacity import export
from analysis.errors import AnalysisError
from analysis.windows import iso, parse_instant
from projects.models import Project
from store.errors import ClickHouseError
from store.reasons import Reason

DEFAULT_WINDOW = timedelta(hours=24)


class Command(BaseCommand):
    help = ("The capacity worksheet of a service window (default: the last 24 h): peak and mean requests per second, "
            "tokens, batching factor, instances, GPU-hours, cost per 1,000 requests, per region, and latency against "
            "load with the headroom at peak (docs/capacity.md).")

    def add_arguments(self, parser):
        parser.add_argument("--service", required=True, help="service.name of the spans")
        parser.add_argument("--project", default="", help="project name (needed when there are several)")
        parser.add_argument("--start", default="", help="ISO 8601 instant (naive means UTC); default: --end - 24 h")
        parser.add_argument("--end", default="", help="ISO 8601 instant, after --start; default: now")
        parser.add_argument("--route", default="", help="only this llm.route")
        parser.add_argument("--format", choices=("text", "json", "csv"), default="text", dest="output_format")

    def handle(self, *args, service, project, start, end, route, output_format, **options):
        try:
            proj = _project(project)
            until = parse_instant(end, "end") if end else datetime.now(timezone.utc)
            since = parse_instant(start, "start") if start else until - DEFAULT_WINDOW
            sheet = capacity.checked(proj.pk, service, since, until, route=route)
        except AnalysisError as exc:
            if output_format == "json":  # the same error document as the API, then a failing exit status
                self.stdout.write(json.dumps({"error": exc.reason, "message": exc.message}))
            raise CommandError(f"{exc.reason}: {exc.message}") from None
        except ClickHouseError as exc:
            if exc.reason != "store_busy":
                raise
            # `up` holds the embedded store (chDB: one process per data dir): the running product answers instead
            query = urlencode({"service": service, "start": iso(since), "end": iso(until), "route": route})
            raise CommandError(f"{exc.message} This worksheet: {settings.PUBLIC_BASE_URL.rstrip('/')}"
                               f"/api/v1/capacity?{query} with a read key.") from None
        if output_format == "json":
            self.stdout.write(json.dumps(sheet.to_json(), indent=2))
        elif output_format == "csv":
            csv.writer(self.stdout, lineterminator="\n").writerows(export.worksheet_rows(sheet))
        else:
            self.stdout.write("\n".join(export.text_lines(sheet)))


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
