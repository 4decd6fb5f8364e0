import json

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder

from analysis.diagnosis.service import run_diagnosis
from analysis.errors import AnalysisError
from analysis.scope import Scope
from analysis.windows import parse_instant
from projects.models import Project
from store.reasons import Reason


class Command(BaseCommand):
    help = "Diagnose one service window of a project: verdict, flowchart path, findings and fixes."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--service", required=True, help="service.name of the spans")
        parser.add_argument("--start", required=True, help="ISO 8601 instant (naive means UTC)")
        parser.add_argument("--end", required=True, help="ISO 8601 instant, after --start")
        parser.add_argument("--route", default="", help="only this llm.route")
        parser.add_argument("--tenant", default="", help="only this tenant.id")
        parser.add_argument("--format", choices=("json", "text"), default="text", dest="output_format")

    def handle(self, *args, project, service, start, end, route, tenant, output_format, **options):
        try:
            proj = Project.objects.filter(name=project).first()
            if proj is None:
                raise AnalysisError(Reason.NOT_FOUND, f"no project named {project!r}")
            result = run_diagnosis(Scope(proj.pk, service, parse_instant(start, "start"), parse_instant(end, "end"),
                                         route=route, tenant=tenant))
        except AnalysisError as exc:
            if output_format == "json":  # the same error document as the API, then a failing exit status
                self.stdout.write(json.dumps({"error": exc.reason, "message": exc.message}))
            raise CommandError(f"{exc.reason}: {exc.message}") from None
        if output_format == "json":
            self.stdout.write(json.dumps(result, indent=2, cls=DjangoJSONEncoder))
        else:
            self.stdout.write("\n".join(summary(result)))


def summary(result: dict) -> list[str]:
    """The diagnosis as readable lines: verdict, path, findings, recommendations."""
    lines = [f"verdict: {result['verdict']}", "", "path:"]
    lines += [f"  {s['question']} {s.get('text') or _fmt(s['value'])}" for s in result["path"]]
    lines += ["", "findings:"] + ([f"  - {f['message']}" for f in result["findings"]] or ["  (none)"])
    lines += ["", "recommendations:"] + ([f"  - {r['text']}\n    {r['why']} ({r['source']})" if isinstance(r, dict)
                                          else f"  - {r}" for r in result["recommendations"]] or ["  (none)"])
    coverage = result.get("coverage") or {"buckets": {}, "signals": {}}
    lines += ["", "coverage:"] + [f"  {e['note']}" for e in [*coverage["buckets"].values(), *coverage["signals"].values()]]
    return lines


def _fmt(value) -> str:
    if value is None:
        return "unknown"
    return f"{value:g}" if isinstance(value, float) else str(value)
