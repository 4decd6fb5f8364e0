from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from projects.models import Project
from slos.models import SIGNALS, WINDOW_DAYS, Slo


class Command(BaseCommand):
    help = ('Create an SLO: "--objective 0.99 of the service\'s requests have --signal under --threshold-ms, over a '
            'rolling --window-days".')

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--service", required=True, help="service.name of the spans")
        parser.add_argument("--signal", required=True, choices=[code for code, _ in SIGNALS])
        parser.add_argument("--threshold-ms", required=True, type=float, help="a request is good under this, ms")
        parser.add_argument("--objective", required=True, type=float, help="the share of good requests, e.g. 0.99")
        parser.add_argument("--window-days", type=int, default=28, choices=WINDOW_DAYS)
        parser.add_argument("--route", default="", help="only this llm.route (default: all routes)")
        parser.add_argument("--tenant", default="", help="only this tenant.id (default: all tenants)")

    def handle(self, *args, project, **fields):
        proj = Project.objects.filter(name=project).first()
        if proj is None:
            raise CommandError(f"no project named {project!r}")
        keep = ("service", "signal", "threshold_ms", "objective", "window_days", "route", "tenant")
        slo = Slo(project=proj, **{k: fields[k] for k in keep})
        try:
            slo.full_clean()
            slo.save()
        except ValidationError as exc:
            raise CommandError("; ".join(" ".join(v) if k == "__all__" else f"--{k.replace('_', '-')}: {' '.join(v)}"
                                         for k, v in exc.message_dict.items())) from None
        except IntegrityError:  # created meanwhile by someone else
            raise CommandError(f"{proj.name} already has this SLO") from None
        self.stdout.write(f"SLO {slo.pk}: {slo.description}")
