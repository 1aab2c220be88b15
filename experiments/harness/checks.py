"""An experiment's checks, each knowing the settings it holds at.

A check is a module-level function of an experiment, ``(results) -> measures``,
marked with :func:`check` and the settings it depends on::

    @check("gamma")
    def book_values(results: dict) -> list[Measure]:
        '''Figures 3.2 and 3.5 to the book's one decimal.'''
        return [within("Fig. 3.2 v_pi(A)", measured=v[0, 1], expected=8.8, tolerance=0.05,
                       failure="v_pi(A) is not the book's")]

Each :class:`Measure` is one comparison: the published or exact value, the measured
one, the tolerance, whether it held, and in words what failed. The gallery shows them
as a table (:mod:`tabular.experiments.harness.gallery`); the check fails when one of
them did not hold.
A check may also give a failure as a plain string, a comparison it has no number for.

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

import numpy as np

from tabular.experiments.harness.settings import shown

PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"


@dataclass(frozen=True)
class Measure:
    """One comparison a check made, as the gallery's table shows it."""

    quantity: str
    """What was compared: ``"Fig. 3.2 v_pi, largest cell error"``."""
    expected: str
    """The published or exact value (or range, or ordering) it was held against."""
    measured: str
    """What the run measured."""
    tolerance: str
    """How far the two may differ, and why (``"0.05 (one decimal)"``; ``"exact"``)."""
    passed: bool
    failure: str = ""
    """What the numbers failed, in words (used only when the comparison did not pass)."""

    def said(self) -> str:
        """The failure in words: :attr:`failure`, or the numbers if it has none."""
        return self.failure or (f"{self.quantity}: measured {self.measured}, expected "
                                f"{self.expected} ({self.tolerance})")

    def record(self) -> dict:
        return {"quantity": self.quantity, "expected": self.expected,
                "measured": self.measured, "tolerance": self.tolerance,
                "passed": self.passed, "failure": "" if self.passed else self.failure}

    @classmethod
    def from_record(cls, record: dict) -> Measure:
        return cls(record["quantity"], record["expected"], record["measured"],
                   record["tolerance"], bool(record["passed"]), record.get("failure", ""))


def standard_error(samples) -> float:
    """The standard error of the mean of independent ``samples`` (all their entries):
    their standard deviation (``ddof=1``) over the square root of their number."""
    samples = np.asarray(samples)
    return float(samples.std(ddof=1) / np.sqrt(samples.size))


def number(value, digits: int = 4) -> str:
    """A measured or published number as the table shows it (``digits`` significant)."""
    return f"{float(value):.{digits}g}"


def within(quantity: str, *, measured, expected, tolerance, failure: str,
           why: str = "") -> Measure:
    """``|measured - expected| <= tolerance``; ``why`` says where the tolerance comes
    from."""
    ok = bool(abs(float(measured) - float(expected)) <= float(tolerance))
    return Measure(quantity, number(expected, 6), number(measured, 6),
                   f"± {number(tolerance)}" + (f" ({why})" if why else ""), ok, failure)


def inside(quantity: str, *, measured, low, high, failure: str, why: str = "") -> Measure:
    """``low < measured < high`` (an open range: the book's band, a bound)."""
    ok = bool(float(low) < float(measured) < float(high))
    return Measure(quantity, f"in ({number(low)}, {number(high)})", number(measured),
                   why or "the range", ok, failure)


def below(quantity: str, *, measured, bound, failure: str, why: str = "") -> Measure:
    """``measured <= bound``."""
    ok = bool(float(measured) <= float(bound))
    return Measure(quantity, f"<= {number(bound)}", number(measured), why or "the bound",
                   ok, failure)


def above(quantity: str, *, measured, bound, failure: str, why: str = "") -> Measure:
    """``measured > bound``."""
    ok = bool(float(measured) > float(bound))
    return Measure(quantity, f"> {number(bound)}", number(measured), why or "the bound",
                   ok, failure)


def fact(quantity: str, *, passed, expected: str, measured: str, failure: str,
         tolerance: str = "exact") -> Measure:
    """A comparison that is not one number against another: an ordering, a policy, a
    count, stated in words."""
    return Measure(quantity, expected, measured, tolerance, bool(passed), failure)


def check(*depends: str):
    """Mark a function ``(results) -> list[Measure | str]`` as one of its module's checks, holding
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
    measures: tuple[Measure, ...] = ()
    """Every comparison the check made (empty: it did not apply, or gave words only)."""

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
                "failures": list(self.failures), "changed": list(self.changed),
                "measures": [m.record() for m in self.measures]}

    @classmethod
    def from_record(cls, record: dict) -> Verdict:
        """The verdict that :meth:`record` stored."""
        return cls(record["name"], record.get("doc", ""), tuple(record.get("failures", ())),
                   tuple(record.get("changed", ())),
                   tuple(Measure.from_record(m) for m in record.get("measures", ())))


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
        said = () if changed else tuple(fn(results))
        measures = tuple(m for m in said if isinstance(m, Measure))
        failures = tuple(m if isinstance(m, str) else m.said()
                         for m in said if isinstance(m, str) or not m.passed)
        verdicts.append(Verdict(fn.__name__, doc, failures, changed, measures))
    return verdicts


def failures_of(verdicts) -> list[str]:
    """The failures of the checks that applied, in order."""
    return [failure for verdict in verdicts for failure in verdict.failures]
