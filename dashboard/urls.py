from django.urls import path

from dashboard.views import budgets, connections, diagnosis, engine, incidents, keys, overview, prompts, reviews, runs
from dashboard.views import alert_rules, scheduler, service_map, tenants, webhooks
from dashboard.views import capacity
from dashboard.views import slos

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("diagnosis/", diagnosis.diagnosis, name="diagnosis-page"),
    path("incidents/", incidents.incidents, name="incidents"),
    path("incidents/<int:incident_id>/", incidents.incident, name="incident"),
    path("scheduler/", scheduler.scheduler, name="scheduler"),
    path("connections/", connections.connections, name="connections"),
    path("engine/", engine.engine, name="engine"),
    path("capacity/", capacity.capacity, name="capacity"),
    path("tenants/", tenants.tenants, name="tenants"),
    path("prompts/", prompts.prompts, name="prompts"),
    path("service-map/", service_map.service_map, name="service-map"),
    path("runs/", runs.runs, name="runs"),
    path("runs/<path:run_id>/", runs.run, name="run"),
    path("keys/", keys.keys, name="keys"),
    path("budgets/", budgets.budgets, name="budgets"),
    path("slos/", slos.slos, name="slos"),
    path("webhooks/", webhooks.webhooks, name="webhooks"),
    path("alerts/", alert_rules.alert_rules, name="alert-rules"),
    path("reviews/", reviews.reviews, name="reviews"),
    path("reviews/<str:week>/", reviews.review, name="review"),
]
