from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from ingest import views as ingest_views
from latency_obs import login, views
from slos import views as slo_views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    # browsers ask for /favicon.ico whatever the page says (admin pages, a JSON answer opened in a tab)
    path("favicon.ico", RedirectView.as_view(url=static("dashboard/favicon.svg"), permanent=True)),
    path("v1/traces", ingest_views.traces, name="otlp-traces"),
    path("v1/metrics", ingest_views.metrics, name="otlp-metrics"),
    path("v1/logs", ingest_views.logs, name="otlp-logs"),
    path("api/v1/ingest/status", ingest_views.status, name="ingest-status"),
    path("api/v1/", include("analysis.urls")),
    path("api/v1/slos", slo_views.slos, name="api-slos"),  # here, not in analysis.urls: slos imports analysis
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", login.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("dashboard.urls")),
]

# JSON on /api/ and /v1/, Django's pages elsewhere (latency_obs/api_errors.py)
handler404 = "latency_obs.api_errors.page_not_found"
handler500 = "latency_obs.api_errors.server_error"
