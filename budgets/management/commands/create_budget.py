import math

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

from budgets.models import Budget, StageTarget
from budgets.presets import PRESETS
from budgets.stages import PERCENTILES, STAGES
from projects.models import Project


class Command(BaseCommand):
    help = "Create a latency budget for a project's service (and route): from a preset, or a total and stage targets."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--service", required=True, help="service.name of the spans")
        parser.add_argument("--route", default="", help="only this llm.route (default: all routes)")
        parser.add_argument("--preset", help=f"one of: {', '.join(PRESETS)}")
        parser.add_argument("--total-ms", type=float, help="target for the total request time, ms")
        parser.add_argument("--stage", action="append", default=[], metavar="NAME=MS",
                            help=f"a stage target, repeatable; stages: {', '.join(STAGES)}")
        parser.add_argument("--percentile", type=int, help="50, 90, 95 or 99 (default 95, or the preset's)")
        parser.add_argument("--name", default="", help="a label for the budget")

    def handle(self, *args, project, service, route, preset, total_ms, stage, percentile, name, **options):
        proj = Project.objects.filter(name=project).first()
        if proj is None:
            raise CommandError(f"no project named {project!r}")
        if percentile is not None and percentile not in PERCENTILES:
            raise CommandError(f"percentile must be one of {', '.join(map(str, PERCENTILES))}, got {percentile}")
        if Budget.objects.filter(project=proj, service=service, route=route).exists():
            raise CommandError(f"a budget for {project}/{service} route {route or '(all)'!r} already exists")
        if preset is not None:
            if total_ms is not None or stage:
                raise CommandError("give either --preset or --total-ms/--stage, not both")
            if preset not in PRESETS:
                raise CommandError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
            with transaction.atomic():
                budget = Budget.from_preset(proj, service, route, preset)
                if percentile is not None:
                    budget.percentile = percentile
                    budget.save(update_fields=["percentile"])
        else:
            if total_ms is None:
                raise CommandError("give --preset or --total-ms")
            targets = dict(_parse_stage(s) for s in stage)
            try:
                with transaction.atomic():
                    budget = Budget.objects.create(project=proj, service=service, route=route, name=name,
                                                   total_ms=_non_negative(total_ms, "--total-ms"),
                                                   percentile=percentile or 95)
                    StageTarget.objects.bulk_create(StageTarget(budget=budget, stage=k, target_ms=v)
                                                    for k, v in targets.items())
            except IntegrityError as exc:  # a concurrent create of the same budget
                raise CommandError(str(exc)) from None
        stages = ", ".join(f"{t.stage}={t.target_ms:g}" for t in budget.stages.order_by("id"))
        self.stdout.write(f"budget {budget.pk}: {budget} [{stages or 'no stage targets'}]")


def _parse_stage(text: str) -> tuple[str, float]:
    stage, sep, ms = text.partition("=")
    if not sep:
        raise CommandError(f"--stage {text!r}: expected NAME=MS")
    if stage not in STAGES:
        raise CommandError(f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
    try:
        return stage, _non_negative(float(ms), f"--stage {stage}")
    except ValueError:
        raise CommandError(f"--stage {text!r}: {ms!r} is not a number of ms") from None


def _non_negative(ms: float, what: str) -> float:
    if not (math.isfinite(ms) and ms >= 0):
        raise CommandError(f"{what} must be a number of ms >= 0, got {ms:g}")
    return ms
