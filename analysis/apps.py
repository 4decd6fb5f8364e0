from django.apps import AppConfig
from django.core import checks


class AnalysisConfig(AppConfig):
    name = "analysis"

    def ready(self):
        from analysis.diagnosis.thresholds import check_settings

        # `manage.py check`, `up` and the other commands run from a shell refuse to start with bad
        # ANALYSIS_THRESHOLDS, rather than the first diagnosis failing later in a worker
        checks.register(check_settings)
