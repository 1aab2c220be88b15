"""Sphinx configuration of the tabular-zoo documentation site (``make docs``)."""

import pathlib
import sys

import tabular

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "tabular-zoo"
author = "tabular-zoo maintainers"
copyright = "the tabular-zoo maintainers, MIT licence"
release = version = tabular.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "myst_parser",
    "tabzoo_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "figures/README.md"]
templates_path = []

# Every cross-reference must resolve. No intersphinx: the build machine reaches no
# documentation site, so references to other projects' types cannot be linked and are
# listed here instead, each family by the reason it cannot resolve.
nitpicky = True
nitpick_ignore_regex = [
    # third-party types in signatures and docstrings (numpy, numba, gymnasium,
    # matplotlib, hypothesis, ray): their inventories are not reachable offline
    (r"py:.*", r"(np|numpy|npt|numba|nb|gym|gymnasium|matplotlib|mpl|plt|hypothesis|st|"
               r"ray)(\..*)?"),
    (r"py:.*", r"(Axes|Figure|Env|Generator|SearchStrategy|ndarray|NDArray|ArrayLike|DTypeLike)"),
    # the standard library's types, for the same reason
    (r"py:.*", r"(typing|collections|collections\.abc|pathlib|os|types|dataclasses|enum|"
               r"concurrent\.futures|argparse|functools|io)\..*"),
    (r"py:.*", r"(int|float|str|bool|bytes|complex|object|type|tuple|list|dict|set|frozenset|"
               r"slice|range|None|Ellipsis|NoneType|Any|Callable|Iterable|Iterator|Sequence|"
               r"Mapping|Path|Self|ModuleType|NamedTuple|ValueError|TypeError|KeyError|"
               r"FloatingPointError|ImportError|RuntimeError|Exception)"),
    # type variables (a signature's R = TypeVar("R")) and private helper types
    # (a leading underscore): the API pages document neither
    (r"py:.*", r"[A-Z]|(.*\.)?_[A-Za-z]\w*"),
]

# autodoc: signatures show the annotations; members in the order the source gives them
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
add_module_names = False
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False
autodoc_mock_imports = ["ray"]
autosummary_generate = False

# No napoleon: the docstrings' numpy sections ("Parameters", "Attributes", "Returns")
# write an entry as "name : description", with no type, which napoleon would render as
# a type; tabzoo_docs turns those sections into field lists itself.

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
suppress_warnings = []

html_theme = "furo"
html_title = f"tabular-zoo {release}"
html_static_path = []
html_show_sourcelink = False
