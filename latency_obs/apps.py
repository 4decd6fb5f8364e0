from django.apps import AppConfig


class LatencyObsConfig(AppConfig):
    name = "latency_obs"
