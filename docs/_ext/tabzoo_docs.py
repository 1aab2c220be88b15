"""The documentation site's own Sphinx extension.

- ``.. family:: tabular.solve``: one API page per family: the package's docstring and
  a table of its ``__all__``, then each submodule under its own heading with all its
  members, each documented once, where it is defined (``tabular.solve.dp.value_iteration``),
  so that every name a docstring refers to has a target and no function clashes with
  a module of its name (the function ``tabular.pg.trpo`` and the module).
- The docstrings' numpy sections write an entry as ``name : description`` with no
  type (the description is not a type); they are turned into field lists here, before
  autodoc renders them, instead of letting napoleon read the description as a type.
- The env classes' Gymnasium-style ``## Heading`` lines become rubrics.
- A reference to a name that the API pages document under another path
  (``tabular.TabularMDP`` for ``tabular.model.mdp.TabularMDP``, ``TabularMDP`` inside
  :mod:`tabular.solve.dp`, which imports it) resolves to the documented object: the
  name is imported where the reference stands and matched by identity.
- ``.. gallery::`` (in a reST page): every figure of ``docs/figures`` with its
  experiment's description.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import pkgutil
import re

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.ext import autosummary
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode, nested_parse_with_titles

FIGURES = pathlib.Path(__file__).resolve().parents[1] / "figures"

# ---------------------------------------------------------------------------------------
# API pages


class Family(SphinxDirective):
    """The API page of one package: its names, then its submodules."""

    required_arguments = 1
    option_spec = {"heading": directives.unchanged, "modules-only": directives.flag,
                   "skip": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        package = importlib.import_module(name)
        underline = self.options.get("heading", "-")
        skip = {f"{name}.{module}" for module in self.options.get("skip", "").split()}
        lines = [] if "modules-only" in self.options else [f".. automodule:: {name}", ""]
        if lines and getattr(package, "__all__", None):
            lines += [".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   {member}" for member in sorted(package.__all__, key=str.lower)]
            lines.append("")
        submodules = sorted(info.name for info in pkgutil.iter_modules(
            getattr(package, "__path__", []), prefix=f"{name}.")
                            if not info.ispkg and info.name not in skip)
        for sub in submodules:
            title = f"``{sub}``"
            lines += [title, underline * len(title), "", f".. automodule:: {sub}",
                      "   :members:", ""]
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source=f"<family {name}>"), node)
        return node.children


# ---------------------------------------------------------------------------------------
# The docstrings' "name : description" sections

_HEADER = re.compile(r"^(?P<indent>\s*)(?P<title>Parameters|Other Parameters|Attributes|"
                     r"Returns)\s*$")
_RULE = re.compile(r"^\s*-{3,}\s*$")
_NAME = r"\*{0,2}\w+(?: \([^()]*\))?"  # a name, and a remark on it: "episodes (default 100)"
_ENTRY = re.compile(rf"^(?P<names>{_NAME}(?:,\s*{_NAME})*)(?:\s+:(?:\s+(?P<text>.*))?)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _section_end(lines: list[str], start: int, indent: int, entries: bool) -> int:
    """Where a section starting at ``start`` ends: the next header, or (after a blank
    line) a line at the section's indent that is not an entry."""
    i = start
    while i < len(lines):
        line = lines[i]
        if _HEADER.match(line) and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            return i
        blank_before = i > start and not lines[i - 1].strip()
        if line.strip() and _indent(line) <= indent and blank_before and not (
                entries and _ENTRY.match(line.strip())):
            return i
        i += 1
    return i


def _entries(body: list[str], indent: int):
    """``(names, description lines)`` of each entry; description lines are dedented."""
    entries = []
    for line in body:
        if line.strip() and _indent(line) <= indent:
            match = _ENTRY.match(line.strip())
            if match is None:
                raise ValueError(f"not a 'name : description' entry: {line.strip()!r}")
            names = [n.strip() for n in re.findall(_NAME, match["names"])]
            entries.append((names, [match["text"]] if match["text"] else []))
        elif entries:
            entries[-1][1].append(line[indent + 4:] if line.strip() else "")
        elif line.strip():
            raise ValueError(f"indented line before the first entry: {line.strip()!r}")
    return entries


def _bold(item: str) -> str:
    """``**name** (remark)`` of an entry's name and its remark."""
    name, _, remark = item.partition(" ")
    name = name.replace("*", r"\*")
    return f"**{name}** {remark}".rstrip()


def convert_sections(lines: list[str]) -> list[str]:
    """The docstring with its numpy sections written as reST fields and attributes."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        header = _HEADER.match(lines[i])
        if not (header and i + 1 < len(lines) and _RULE.match(lines[i + 1])):
            out.append(lines[i])
            i += 1
            continue
        indent, title = len(header["indent"]), header["title"]
        end = _section_end(lines, i + 2, indent, entries=title != "Returns")
        body = lines[i + 2:end]
        while body and not body[-1].strip():
            body.pop()
        pad = " " * indent
        if title == "Returns":
            text = [line[indent:] for line in body]
            out += [f"{pad}:Returns: {text[0]}", *(f"{pad}    {t}" if t else "" for t in text[1:])]
        elif title == "Attributes":
            for names, desc in _entries(body, indent):
                for name in names:
                    out += [f"{pad}.. attribute:: {name.split(' ')[0]}", ""]
                    out += [f"{pad}   {d}" if d else "" for d in desc]
                    out.append("")
        else:
            out.append(f"{pad}:{title}:")
            for names, desc in _entries(body, indent):
                first = ", ".join(_bold(n) for n in names)
                desc = desc or [""]
                lead = f"{first} -- {desc[0]}" if desc[0] else first
                out.append(f"{pad}    * {lead}")
                out += [f"{pad}      {d}" if d else "" for d in desc[1:]]
        out.append("")
        i = end
    return out


_MARKDOWN_HEADING = re.compile(r"^(?P<indent>\s*)#{2,4} (?P<title>\S.*)$")


def convert_headings(lines: list[str]) -> list[str]:
    """The env classes' Gymnasium-style Markdown headings (``## Action Space``) as
    rubrics, the form reST has for a heading inside a docstring."""
    out: list[str] = []
    for line in lines:
        match = _MARKDOWN_HEADING.match(line)
        if match:
            if out and out[-1].strip():
                out.append("")
            out += [f"{match['indent']}.. rubric:: {match['title']}", ""]
        else:
            out.append(line)
    return out


def process_docstring(app, what, name, obj, options, lines):
    if not (getattr(obj, "__module__", None) or name).startswith("tabular"):
        return  # another project's docstring (a class a module imports)
    try:
        lines[:] = convert_sections(convert_headings(lines))
    except ValueError as error:
        from sphinx.util import logging
        logging.getLogger(__name__).warning(f"{name}: {error}", type="tabzoo", subtype="docstring")


# ---------------------------------------------------------------------------------------
# References to re-exported names


def _chain(dotted: str) -> list:
    """The objects that the dotted name's prefixes reach as Python would (attribute
    first, then a submodule import): ``[tabular, tabular.solve, ...]``, as far as it
    goes; empty if its first part is no module."""
    parts = dotted.split(".")
    try:
        chain = [importlib.import_module(parts[0])]
    except ImportError:
        return []
    for i, part in enumerate(parts[1:], 1):
        obj = chain[-1]
        if hasattr(obj, part):
            chain.append(getattr(obj, part))
        elif inspect.ismodule(obj):
            try:
                chain.append(importlib.import_module(".".join(parts[:i + 1])))
            except ImportError:
                break
        else:
            break
    return chain


def _is_named(obj) -> bool:
    """Whether identity names ``obj``: a module, class or function (not a number or
    string, which may be shared, nor a bound method, made anew at each access)."""
    return inspect.ismodule(obj) or inspect.isclass(obj) or (
        callable(obj) and not inspect.ismethod(obj))


def _object_of(name: str, modules) -> object | None:
    """The object a documented name stands for: its module imported, the rest read as
    attributes (``tabular.rlhf.kto.kto`` is the function in the module, although the
    package's attribute ``kto`` is that function)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            obj = importlib.import_module(module)
            for part in parts[cut:]:
                obj = getattr(obj, part, None)
            return obj
    return None


def _documented(env) -> dict[int, str]:
    """``{id(object): documented name}`` over the Python domain's objects."""
    py = env.get_domain("py")
    key = (len(py.objects), len(py.modules))
    cache = getattr(env, "_tabzoo_documented", None)
    if cache is None or cache[0] != key:
        table = {}
        for name in [*py.modules, *py.objects]:
            obj = _object_of(name, py.modules)
            if obj is not None and _is_named(obj):
                table.setdefault(id(obj), name)
        cache = env._tabzoo_documented = (key, table)
    return cache[1]


def _target(env, candidate: str) -> str | None:
    """The documented name of what ``candidate`` names, through the deepest of its
    prefixes that is documented (``tabular.TabularMDP.arrays`` ->
    ``tabular.model.mdp.TabularMDP.arrays``)."""
    py = env.get_domain("py")
    table = _documented(env)
    parts = candidate.split(".")
    chain = _chain(candidate)
    for depth in range(len(chain), 0, -1):
        obj = chain[depth - 1]
        if _is_named(obj) and id(obj) in table:
            name = ".".join([table[id(obj)], *parts[depth:]])
            if name in py.objects or name in py.modules:
                return name
            return None
    return None


def resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    module, cls = node.get("py:module"), node.get("py:class")
    candidates = [f"{module}.{cls}.{target}"] * bool(module and cls)
    candidates += [f"{module}.{target}"] * bool(module) + [target]
    py = env.get_domain("py")
    names = [_target(env, candidate) for candidate in candidates]
    if not any(names):
        # a name the module does not import (a docstring may name a class it only
        # describes), or an autosummary line, which shows a docstring away from its
        # module: the name stands for the one documented object it ends, if only one
        names = [n for n in py.objects if n.endswith(f".{target}")]
        names = names if len(names) == 1 else []
    for name in names:
        if name is not None:
            entry = py.objects.get(name) or py.modules[name]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                contnode, name)
    return None


# ---------------------------------------------------------------------------------------
# The gallery of committed figures


class Gallery(SphinxDirective):
    """Every ``docs/figures/*.png`` with the description of the experiment that draws it."""

    def run(self):
        from tabular.experiments.harness import registry

        lines = []
        for path in sorted(FIGURES.glob("*.png")):
            name = path.stem
            known = name in registry.EXPERIMENTS
            caption = registry.summary(name) if known else name.replace("_", " ")
            self.env.note_dependency(str(path))
            lines += [f".. figure:: /figures/{path.name}", f"   :alt: {caption}",
                      "   :width: 100%", "", f"   {caption}"]
            if known:
                lines += ["", f"   Drawn by ``python -m tabular.experiments {name}``."]
            lines.append("")
        node = nodes.container(classes=["gallery"])
        self.state.nested_parse(StringList(lines, source="<gallery>"), self.content_offset, node)
        return [node]


# ---------------------------------------------------------------------------------------
# autosummary's one-line summaries

_NOT_ENDS = ("et al.", "e.g.", "i.e.", "vs.", "eq.", "eqs.", "Fig.", "Figs.", "Ex.", "cf.")


def extract_summary(doc, settings) -> str:
    """The first sentence of a docstring's first paragraph, for autosummary's table.

    autosummary cuts at the first period and a space, and its check that the cut
    leaves the markup whole parses the whole paragraph instead of the cut; the
    docstrings cite "(eq. 6.7)" and hold ``... + ...`` in literals. This cuts where the
    sentence parses on its own and does not end with an abbreviation."""
    stanza = []
    for line in doc:
        if line.strip():
            stanza.append(line.strip())
        elif stanza:
            break
    text = " ".join(stanza)
    sentences = re.split(r"\.\s+", text)
    for i in range(1, len(sentences)):
        summary = ". ".join(sentences[:i]).rstrip(".") + "."
        if summary.endswith(_NOT_ENDS):
            continue
        parsed = autosummary._parse_summary([summary], settings)
        broken = parsed.findall(lambda n: isinstance(n, (nodes.system_message, nodes.problematic)))
        if not any(broken):
            return summary
    return text


autosummary.extract_summary = extract_summary


def setup(app):
    app.add_directive("family", Family)
    app.add_directive("gallery", Gallery)
    app.connect("autodoc-process-docstring", process_docstring, priority=400)
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
