"""The alerts app's modules import one another without a circle: the outbox (delivery.py, with its tasks) needs
nothing of the rules, and no module hides an import inside a function to break a circle."""
import ast
from pathlib import Path

import alerts

APP = Path(alerts.__file__).parent
MODULES = {path.stem: ast.parse(path.read_text()) for path in APP.glob("*.py")}


def _imported(tree: ast.Module) -> set[str]:
    """The alerts modules a module imports, wherever the import statement is."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "alerts":
            found |= {f"alerts.{a.name}" for a in node.names}  # from alerts import http
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name.split(".")[1] for name in found if name.startswith("alerts.")} & set(MODULES)


GRAPH = {name: _imported(tree) for name, tree in MODULES.items()}


def _reachable(start: str) -> set[str]:
    seen, todo = set(), list(GRAPH[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(GRAPH[name])
    return seen


def test_no_alerts_module_imports_inside_a_function():
    nested = [(name, node.lineno) for name, tree in MODULES.items() for fn in ast.walk(tree)
              if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert nested == []


def test_alerts_modules_import_without_a_circle():
    assert GRAPH["tasks"] >= {"delivery", "rules"}  # the graph is read, not empty
    assert [name for name in GRAPH if name in _reachable(name)] == []


def test_the_outbox_needs_nothing_of_the_rules():
    assert _reachable("delivery") & {"rules", "kinds", "states", "tasks"} == set()
    assert "delivery" not in _reachable("kinds")  # a kind measures; only the state machine sends
