from django.urls import path

from analysis import views

urlpatterns = [
    path("diagnosis", views.diagnosis, name="diagnosis"),
]
