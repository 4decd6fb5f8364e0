from datetime import datetime, timezone

from django.core.management.base import BaseCommand, CommandError

from analysis.wording import fmt
from projects.models import Project
from reports import sending, weeks


class Command(BaseCommand):
    help = "Build and store a project's weekly latency review (replacing one of the same week) and announce it."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--week", default="", help='ISO week "YYYY-Www"; default: the last complete week')

    def handle(self, *args, project, week, **options):
        found = Project.objects.filter(name=project).first()
        if found is None:
            raise CommandError(f"no project named {project!r}")
        if week:
            try:
                weeks.parse(week)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        review = sending.send(found, week or None, now=datetime.now(timezone.utc))
        self.stdout.write(f"{review.project.name} {review.week}: {review.start:%Y-%m-%d %H:%M} – "
                          f"{review.end:%Y-%m-%d %H:%M} UTC")
        for s in review.data["services"]:
            p95 = s["percentiles"]["ttft"]["p95"]
            last = f"last week {fmt(p95['last'], 'ms')}" if p95["last"] is not None else "no data last week"
            self.stdout.write(f"  {s['service']}: {s['requests']['this']} requests, TTFT p95 {fmt(p95['this'], 'ms')} "
                              f"({last})")
