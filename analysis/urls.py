from django.urls import path

from analysis import views

urlpatterns = [
    path("diagnosis", views.diagnosis, name="diagnosis"),
    path("overview", views.overview, name="api-overview"),
    path("capacity", views.capacity, name="api-capacity"),
    path("incidents", views.incidents, name="api-incidents"),
    path("incidents/<int:incident_id>", views.incident, name="api-incident"),
]
