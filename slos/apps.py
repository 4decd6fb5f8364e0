from django.apps import AppConfig


class SlosConfig(AppConfig):
    name = "slos"
    verbose_name = "SLOs"

    def ready(self):
        # the capacity worksheet judges load against a service's SLO before its budget (analysis cannot import slos)
        from analysis.capacity.objectives import register
        from slos.objective import slo_objective

        register("slo", 10, slo_objective)
