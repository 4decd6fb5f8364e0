from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from ingest import views as ingest_views
from latency_obs import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("v1/traces", ingest_views.traces, name="otlp-traces"),
    path("api/v1/ingest/status", ingest_views.status, name="ingest-status"),
    path("api/v1/", include("analysis.urls")),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("reviews/", include("reports.urls")),
    path("", include("dashboard.urls")),
]
