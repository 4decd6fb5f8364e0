from django.urls import path

from reports import views

urlpatterns = [
    path("", views.reviews, name="reviews"),
    path("<str:week>/", views.review, name="review"),
]
