"""The test suite's own layout: tests beside their families, one ``conftest.py``, and no
test module importing another.

The folders of ``tests/`` mirror the families of ``tabular/`` (``tests/learn`` tests
``tabular/learn``, ``tests/plot`` tests ``tabular/plot.py``, ...), plus a few folders for
what spans the package (listed in ``ACROSS`` below). Test folders have no
``__init__.py``: pytest's default import mode puts each test's folder on ``sys.path``
and imports it by its base name, so base names are unique across the tree. What
several modules share is a fixture or helper of the one root ``conftest.py`` (a second
``conftest.py`` would be imported under the same module name, and ``from conftest
import ...`` would then depend on the collection order).
"""

import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "tabular"

#: Folders for what is not one family's: the shared core (``tabular/_numba``, results,
#: checks, types), the environments, the experiments, the bad-input catalogue, and the
#: house (layering, docs, README, wheel, first calls, benchmarks).
ACROSS = {"core", "envs", "experiments", "bad_inputs", "house"}


def test_every_test_folder_is_a_family_or_spans_the_package():
    families = {p.name for p in PACKAGE.iterdir() if not p.name.startswith("_") and (
        (p / "__init__.py").exists() or p.suffix == ".py")}
    families = {name.removesuffix(".py") for name in families}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    strays = sorted(folders - families - ACROSS)
    assert not strays, f"test folders that mirror no family of tabular/: {strays}"
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert not loose, f"test modules outside a family folder: {loose}"


def test_one_conftest_and_no_test_packages():
    conftests = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("conftest.py"))
    assert conftests == ["conftest.py"], conftests
    packages = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("__init__.py"))
    assert not packages, f"test folders are not packages: {packages}"


def test_base_names_are_unique():
    names = Counter(p.name for p in TESTS.rglob("*.py"))
    assert not [n for n, k in names.items() if k > 1], names.most_common(3)


def test_no_test_module_imports_another():
    test_modules = {p.stem for p in TESTS.rglob("test_*.py")}
    offenders = []
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.relative_to(TESTS)} imports {n}" for n in names
                          if n.split(".")[0] in test_modules]
    assert not offenders, offenders
