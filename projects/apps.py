from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"

    def ready(self):
        from projects import keys  # noqa: F401  (connects the cache-invalidation signal)
