from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"

    def ready(self):
        # the capacity worksheet judges load against a service's budget (analysis cannot import budgets)
        from analysis.capacity.objectives import register
        from budgets.objective import budget_objective

        register("budget", 20, budget_objective)
