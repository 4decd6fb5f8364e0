"""One module per page's numbers: build(scope) -> a frozen dataclass, read by the dashboard page, the API, the
weekly review and the alert kinds alike, so a number shown in two places is computed in one (STYLE.md "Layout")."""
