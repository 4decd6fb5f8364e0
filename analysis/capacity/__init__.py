"""The capacity worksheet (issue 36): how much traffic a service takes and how much more it can take.

`build(project_id, service, start, end, route="")` -> Capacity is the one entry point (worksheet.py); the API and
the command use `checked()` (with the window checks) and `document()`, its JSON. docs/capacity.md says what each field means.
"""
from analysis.capacity.worksheet import build, checked, document  # noqa: F401
