"""The package's layering: every module imports only its own layer or the ones below,
and the module import graph has no cycle."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "tabular"

#: Lowest first: a module may import from its own layer and from the layers before it.
LAYERS = [
    ("tabular.checks", "tabular.schedules", "tabular._numba"),
    ("tabular.results", "tabular.model", "tabular.types"),
    ("tabular.rules",),
    ("tabular.solve",),
    ("tabular.learn", "tabular.linear", "tabular.explore"),
    ("tabular.plan", "tabular.pg"),
    ("tabular.rlhf",),
    ("tabular.plot", "tabular.testing", "tabular.warm", "tabular"),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    best = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    assert best is not None, f"{module} is in no layer of tests/test_layers.py"
    return best[0]


def imports() -> dict[str, set[str]]:
    graph = {}
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text())
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[module_name(path)] = {t for t in targets if t.split(".")[0] == "tabular"}
    return graph


GRAPH = imports()


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_go_down(module):
    upward = [t for t in GRAPH[module] if layer(t) > layer(module)]
    assert not upward, f"{module} imports from a higher layer: {upward}"


def test_no_relative_imports():
    relative = [str(p) for p in ROOT.rglob("*.py")
                if any(isinstance(n, ast.ImportFrom) and n.level > 0
                       for n in ast.walk(ast.parse(p.read_text())))]
    assert not relative, f"relative imports (the package imports by full name): {relative}"


def test_no_cycles():
    # package __init__ files only re-export; the cycle that matters is between modules
    def is_package(m: str) -> bool:
        return (ROOT.parent / m.replace(".", "/") / "__init__.py").exists()

    graph = {m: {t for t in ts if t in GRAPH and not is_package(t)}
             for m, ts in GRAPH.items() if not is_package(m)}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in graph.get(m, ()):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path + [m, t]))
            if t not in state:
                visit(t, path + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])
