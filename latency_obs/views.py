from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render

from ingest.pipeline import get_writer
from projects.models import Project


@login_required
def home(request):
    projects = Project.objects.filter(members=request.user) if not request.user.is_superuser else Project.objects.all()
    return render(request, "home.html", {"projects": projects, "otlp_url": request.build_absolute_uri("/v1/traces")})


def healthz(request):
    """Liveness plus the spool backlog, so operators see ingest falling behind."""
    writer = get_writer()
    segments, size = writer.spool.backlog()
    status = 200 if not writer.last_error else 503
    return JsonResponse(
        {"ok": status == 200, "spool_segments": segments, "spool_bytes": size, "writer_error": writer.last_error},
        status=status,
    )
