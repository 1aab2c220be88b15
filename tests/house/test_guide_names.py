"""The contributor's guide (docs/contributing.md) stays current: every parameter it names
is one the code has.

Three kinds of mention are checked: an inline ``name=`` (a keyword as a user writes it),
a row of the Arguments table (each function named in its "used by" cell takes that
parameter, each ``Class.field`` is a field), and every call in the guide's Python
examples and inline code to a function it imports or the public API names (each keyword
is a parameter of that function).
"""

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import pytest

import tabular
import tabular.envs
import tabular.linear
import tabular.rlhf
from tabular._numba import notice

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "contributing.md"

#: The public callables by name (``Class.method`` for methods, a class by its name).
PUBLIC = {name: obj for module in (tabular, tabular.rlhf, tabular.linear, tabular.envs)
          for name in module.__all__ if callable(obj := getattr(module, name))}


def parameters(obj) -> set[str] | None:
    """The names ``obj`` accepts as keywords; ``None`` when it takes any (``**kwargs``)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return {name for name, p in signature.parameters.items() if p.kind is not p.POSITIONAL_ONLY}


#: numba's own options, which the guide names when it says how a kernel is compiled.
NUMBA_OPTIONS = {"cache", "inline", "nogil", "parallel"}


def library_modules() -> list:
    """Every module of the library and its envs, imported: a fixed set, not whatever this
    worker happened to import before (an experiment's ``Config`` field, e.g. the speed
    figure's ``repeats``, is a setting of that experiment, not a parameter of the code)."""
    names = {info.name for package in (tabular, tabular.envs)
             for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")}
    return [importlib.import_module(name) for name in sorted(names)
            if not name.startswith("tabular.experiments")]


def every_parameter() -> set[str]:
    """What an inline ``name=`` may name: a parameter of a public callable, a field of a
    result of the package (``converged=False``), or one of :data:`NUMBA_OPTIONS`."""
    found: set[str] = set(NUMBA_OPTIONS)
    for fn in notice.public_functions([tabular, tabular.rlhf, tabular.linear]).values():
        found |= parameters(fn) or set()
    for obj in PUBLIC.values():
        found |= parameters(obj) or set()
    for module in library_modules():
        for obj in vars(module).values():
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
                found |= {f.name for f in dataclasses.fields(obj)}
    return found


def code_spans(text: str) -> list[str]:
    """The inline code spans of ``text`` outside fenced blocks."""
    prose = re.sub(r"^[ \t]*```.*?^[ \t]*```", "", text, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", prose)


def python_blocks(text: str) -> list[str]:
    """The fenced Python blocks, dedented (a block may sit in a list item)."""
    return [textwrap.dedent(block) for block in
            re.findall(r"^[ \t]*```python\n(.*?)^[ \t]*```", text, flags=re.S | re.M)]


def bad_inline_keywords(text: str, known: set[str]) -> list[str]:
    """Inline ``name=...`` spans whose name no public callable takes."""
    return [span for span in code_spans(text)
            if (m := re.match(r"([a-z_][a-z0-9_]*)=", span)) and m.group(1) not in known]


def bad_table_rows(text: str) -> list[str]:
    """Rows of the Arguments table whose "used by" functions lack the parameter."""
    section = text.split("### Arguments", 1)[1].split("\n#", 1)[0]
    bad = []
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-zA-Z_]\w*)`", cells[0])
        for used in re.findall(r"`([A-Za-z_][\w.]*)`", cells[-1]):
            owner, _, field = used.partition(".")
            if owner not in PUBLIC:
                continue
            if field:  # a result's field, as Class.field
                if field not in {f.name for f in dataclasses.fields(PUBLIC[owner])}:
                    bad.append(f"{used}: no such field")
                continue
            accepted = parameters(PUBLIC[owner])
            bad += [f"{used}: no parameter {name}" for name in names
                    if accepted is not None and name not in accepted]
    return bad


def _resolve(node: ast.expr, imported: dict[str, object]):
    if isinstance(node, ast.Name):
        return imported.get(node.id, PUBLIC.get(node.id))
    return None


def bad_call_keywords(source: str, imported: dict[str, object] | None = None) -> list[str]:
    """Calls in ``source`` (a block or an expression) to an imported or public function
    with a keyword it does not take."""
    tree = ast.parse(source)
    imported = dict(imported or {})
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tabular"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                imported[alias.asname or alias.name] = getattr(module, alias.name)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (fn := _resolve(node.func, imported)) is not None:
            accepted = parameters(fn)
            bad += [f"{ast.unparse(node.func)}(..., {k.arg}=)" for k in node.keywords
                    if k.arg is not None and accepted is not None and k.arg not in accepted]
    return bad


def bad_names(text: str) -> list[str]:
    bad = bad_inline_keywords(text, every_parameter()) + bad_table_rows(text)
    for block in python_blocks(text):
        bad += bad_call_keywords(block)
    for span in code_spans(text):
        try:
            ast.parse(span, mode="eval")
        except SyntaxError:
            continue
        bad += bad_call_keywords(span)
    return bad


def test_the_guide_names_only_parameters_the_code_has():
    text = GUIDE.read_text()
    assert "### Arguments" in text and python_blocks(text), "the guide lost its sections"
    assert bad_names(text) == []


@pytest.mark.parametrize("drift", [
    ("`action_mask` | bool", "`legal_mask` | bool"),          # a table row's parameter
    ("`runs=n`", "`repeats=n`"),                             # an inline keyword
    ("max_steps=ep.max_steps)", "step_limit=ep.max_steps)"),  # a record built by keyword
    ("low_inclusive=True", "inclusive_low=True"),            # a private helper's keyword
])
def test_a_renamed_parameter_fails_the_check(drift):
    """The check sees each kind of mention: a guide that names a parameter the code does
    not have fails."""
    text = GUIDE.read_text()
    old, new = drift
    assert old in text
    assert bad_names(text.replace(old, new, 1))
