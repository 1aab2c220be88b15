"""The package's layering: every module imports only its own layer or the ones below,
and the module import graph has no cycle."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "tabular"

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
    assert best is not None, f"{module} is in no layer of tests/house/test_layers.py"
    return best[0]


def imported(path: Path) -> set[str]:
    """What ``path`` imports: each ``import M`` and ``from M import N`` gives ``M`` and
    ``M.N`` (``N`` may be a module)."""
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets.add(node.module)
            targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
    return targets


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


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """An import cycle of ``graph`` (``[]``: none)."""
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> list[str]:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return path + [m, t]
            if t not in state and (found := visit(t, path + [m])):
                return found
        state[m] = 2
        return []

    for m in sorted(graph):
        if m not in state and (found := visit(m, [])):
            return found
    return []


def test_no_cycles():
    # package __init__ files only re-export; the cycle that matters is between modules
    def is_package(m: str) -> bool:
        return (ROOT.parent / m.replace(".", "/") / "__init__.py").exists()

    graph = {m: {t for t in ts if t in GRAPH and not is_package(t)}
             for m, ts in GRAPH.items() if not is_package(m)}
    found = cycle(graph)
    assert not found, "import cycle: " + " -> ".join(found)


# ---------------------------------------------------------------------------------------
# experiments/ (installed as tabular.experiments): a harness, and figures that import the
# harness and the helper modules beside them, never another figure.

EXPERIMENTS = ROOT.parent / "experiments"
HARNESS = "tabular.experiments.harness"


def experiment_module(path: Path) -> str:
    parts = path.relative_to(EXPERIMENTS).with_suffix("").parts
    return ".".join(("tabular", "experiments", *(parts[:-1] if parts[-1] == "__init__"
                                                 else parts)))


EXPERIMENT_FILES = {experiment_module(p): p for p in EXPERIMENTS.rglob("*.py")}
PACKAGES = {m for m, p in EXPERIMENT_FILES.items() if p.name == "__init__.py"}
EXPERIMENT_GRAPH = {m: {t for t in imported(p) if t in EXPERIMENT_FILES}
                    for m, p in EXPERIMENT_FILES.items()}


def registered() -> set[str]:
    from tabular.experiments.harness.registry import MODULES as registry

    return {f"tabular.experiments.{m}" for m in registry}


FIGURES = registered()


def test_every_registered_experiment_is_a_module():
    assert FIGURES <= set(EXPERIMENT_FILES), FIGURES - set(EXPERIMENT_FILES)


def test_the_harness_imports_no_figure():
    """The harness reaches an experiment only through the registry's dynamic load."""
    for m, targets in EXPERIMENT_GRAPH.items():
        if m.startswith(HARNESS):
            outside = {t for t in targets if not t.startswith(HARNESS)
                       and t != "tabular.experiments"}
            assert not outside, f"{m} imports outside the harness: {sorted(outside)}"


def test_no_figure_imports_another_figure():
    for m, targets in EXPERIMENT_GRAPH.items():
        figures = sorted(targets & FIGURES)
        assert not figures, f"{m} imports the figure(s) {figures}: share a helper module"


def test_runner_and_gallery_are_independent():
    runner, gallery = f"{HARNESS}.runner", f"{HARNESS}.gallery"
    assert gallery not in EXPERIMENT_GRAPH[runner]
    assert runner not in EXPERIMENT_GRAPH[gallery]


def test_experiments_have_no_relative_imports_and_no_cycles():
    relative = [str(p) for p in EXPERIMENT_FILES.values()
                if any(isinstance(n, ast.ImportFrom) and n.level > 0
                       for n in ast.walk(ast.parse(p.read_text())))]
    assert not relative, f"relative imports (the package imports by full name): {relative}"
    graph = {m: ts - PACKAGES for m, ts in EXPERIMENT_GRAPH.items() if m not in PACKAGES}
    found = cycle(graph)
    assert not found, "import cycle: " + " -> ".join(found)
