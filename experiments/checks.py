"""An experiment's checks, each knowing the settings it holds at.

A check is a module-level function of an experiment, ``(results) -> failures``
(empty: it holds), marked with :func:`check` and the settings it depends on::

    @check("gamma")
    def book_values(results: dict) -> list[str]:
        '''Figures 3.2 and 3.5 to the book's one decimal.'''

A check that compares against the book holds at the book's settings only: when a
run changes one it depends on (``--set gamma=0.95``), :func:`judge` does not run it
and reports it "not applicable (gamma = 0.95, the book uses 0.9)". A check with no
settings (``@check()``) is an invariant that holds for any of them, and always runs.
The reference values are those of the unchanged config of the same mode: a setting
that ``--quick`` makes smaller is compared with its quick value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import ModuleType

from .settings import shown

PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"


def check(*depends: str):
    """Mark a function ``(results) -> list[str]`` as one of its module's checks, holding
    at the reference values of the settings named in ``depends`` (none: at any)."""
    def mark(fn):
        fn.depends = depends
        return fn
    return mark


@dataclass(frozen=True)
class Verdict:
    """What one check said about one run."""

    name: str
    """The check's function name."""
    doc: str
    """The check's docstring: what it expects."""
    failures: tuple[str, ...] = ()
    """What the numbers failed (empty: the check held, or did not apply)."""
    changed: tuple[str, ...] = ()
    """Why the check did not apply: each setting it depends on that the run changed,
    ``"gamma = 0.95, the book uses 0.9"`` (empty: it applied)."""

    @property
    def status(self) -> str:
        if self.changed:
            return NOT_APPLICABLE
        return FAILED if self.failures else PASSED

    def describe(self) -> str:
        """``name: not applicable (gamma = 0.95, the book uses 0.9)``, or the status."""
        why = f" ({'; '.join(self.changed)})" if self.changed else ""
        return f"{self.name}: {self.status}{why}"

    def record(self) -> dict:
        """The verdict as ``config.json`` stores it."""
        return {"name": self.name, "doc": self.doc, "status": self.status,
                "failures": list(self.failures), "changed": list(self.changed)}

    @classmethod
    def from_record(cls, record: dict) -> Verdict:
        """The verdict that :meth:`record` stored."""
        return cls(record["name"], record.get("doc", ""), tuple(record.get("failures", ())),
                   tuple(record.get("changed", ())))


def checks_of(module: ModuleType) -> list:
    """The checks of an experiment, in the order its module defines (or imports) them.
    A check that depends on a setting its ``Config`` lacks is an error, not a check
    that silently always applies."""
    found = [value for value in vars(module).values()
             if callable(value) and isinstance(getattr(value, "depends", None), tuple)]
    fields = {f.name for f in dataclasses.fields(module.Config)}
    for fn in found:
        unknown = [name for name in fn.depends if name not in fields]
        if unknown:
            raise ValueError(f"{module.__name__}.{fn.__name__} depends on "
                             f"{', '.join(unknown)}, which its Config does not have")
    return found


def changes(module: ModuleType, depends, config, quick: bool) -> tuple[str, ...]:
    """The settings among ``depends`` whose value in ``config`` is not the reference's,
    each as ``"gamma = 0.95, the book uses 0.9"`` (or ``--quick uses`` for a value
    that ``--quick`` sets)."""
    full = module.Config()
    reference = module.Config.quick() if quick else full
    source = getattr(module.Config, "REFERENCE", "the book")
    found = []
    for name in depends:
        value, wanted = getattr(config, name), getattr(reference, name)
        if value != wanted:
            who = "--quick" if quick and wanted != getattr(full, name) else source
            found.append(f"{name} = {shown(value)}, {who} uses {shown(wanted)}")
    return tuple(found)


def judge(module: ModuleType, results: dict, config=None, quick: bool = False) -> list[Verdict]:
    """Every check of ``module`` on ``results``: the ones whose settings ``config``
    keeps at the reference values are run, the others reported not applicable.
    ``config=None`` runs them all (the numbers are taken to be the reference run's)."""
    verdicts = []
    for fn in checks_of(module):
        doc = " ".join((fn.__doc__ or "").split())
        changed = () if config is None else changes(module, fn.depends, config, quick)
        failures = () if changed else tuple(fn(results))
        verdicts.append(Verdict(fn.__name__, doc, failures, changed))
    return verdicts


def failures_of(verdicts) -> list[str]:
    """The failures of the checks that applied, in order."""
    return [failure for verdict in verdicts for failure in verdict.failures]
