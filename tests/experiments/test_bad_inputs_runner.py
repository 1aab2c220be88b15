"""The bad-input catalogue of the experiments runner: what a careless user types at
``python -m tabular.experiments`` or passes to its Python entry points is a clear error
that names the option or the setting, before anything is computed, never a traceback from
deep inside, a silent coercion or an option quietly ignored.

Each row is ``(id, call, exception type, fragment of the message)``. A command-line row
calls :func:`~tabular.experiments.harness.cli.main` through :func:`cli`, so that an exit
status is a ``SystemExit`` whatever the path (argparse's error or a status returned after
a one-line message); its fragment is looked for on stderr. The rows of
:mod:`tests.test_bad_inputs` stay there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tabular.experiments.harness import registry, runner
from tabular.experiments.harness.cli import main
from tabular.experiments.harness.executor import LocalExecutor, make_executor
from tabular.experiments.harness.settings import check_value, parse_value

CLIFF = "cliff_walking"


def cli(*argv: str):
    """``python -m tabular.experiments ARGV`` as a call that raises ``SystemExit`` with the
    command's exit status."""
    def call():
        raise SystemExit(main(list(argv)))
    return call


def config(name: str = CLIFF, **settings):
    return lambda: registry.make_config(registry.load(name), settings=settings)


#: What a user types at ``python -m tabular.experiments`` that must exit with a one-line
#: message: ``(id after "cli ", the arguments, fragment of stderr)``.
CLI_BAD = [
    ("unknown experiment", ["cliff"], "unknown experiment(s) cliff"),
    ("experiment in capitals", ["Cliff_Walking"], "unknown experiment(s) Cliff_Walking"),
    ("--set without =", [CLIFF, "--set", "epsilon"], "--set takes KEY=VALUE, got 'epsilon'"),
    ("--set without key", [CLIFF, "--set", "=0.2"], "--set takes KEY=VALUE, got '=0.2'"),
    ("--set unknown key", [CLIFF, "--set", "epsilonn=0.2"], "no setting epsilonn"),
    ("--set twice", [CLIFF, "--set", "seed=1", "--set", "seed=2"],
     "--set seed given twice ('1' and '2')"),
    ("--set without experiment", ["--set", "seed=1"], "--set needs the experiment(s)"),
    ("--set int as float", [CLIFF, "--set", "episodes=1.5"], "episodes takes a int, got '1.5'"),
    ("--set float as text", [CLIFF, "--set", "epsilon=abc"], "epsilon takes a float, got 'abc'"),
    ("--set NaN", [CLIFF, "--set", "epsilon=nan"],
     "epsilon takes a float, got 'nan': 'nan' is NaN"),
    ("--set empty", [CLIFF, "--set", "epsilon="], "epsilon takes a float, got ''"),
    ("--set sequence item", ["random_walk", "--set", "td_alphas=0.1,x"],
     "td_alphas takes comma-separated floats, got '0.1,x'"),
    ("--set key of another experiment", [CLIFF, "random_walk", "--set", "epsilon=0.2"],
     "random_walk has no setting epsilon"),
    ("--runs 0", [CLIFF, "--runs", "0"], "--runs must be >= 1, got 0"),
    ("--runs -1", [CLIFF, "--runs", "-1"], "--runs must be >= 1, got -1"),
    ("--runs text", [CLIFF, "--runs", "x"], "argument --runs: invalid int value: 'x'"),
    ("--runs fraction", [CLIFF, "--runs", "1.5"], "argument --runs: invalid int value: '1.5'"),
    ("--jobs", [CLIFF, "--jobs", "2"], "unrecognized arguments: --jobs 2"),
    ("--backend unknown", [CLIFF, "--backend", "slurm"],
     "argument --backend: invalid choice: 'slurm'"),
    ("--wait negative", [CLIFF, "--wait", "-1"],
     "argument --wait: takes a number of seconds >= 0, got '-1'"),
    ("--wait NaN", [CLIFF, "--wait", "nan"],
     "argument --wait: takes a number of seconds >= 0, got 'nan'"),
    ("--wait text", [CLIFF, "--wait", "soon"],
     "argument --wait: takes a number of seconds >= 0, got 'soon'"),
    ("--out empty", [CLIFF, "--out", ""], "argument --out: takes a directory, got ''"),
    ("--out under a file", [CLIFF, "--quick", "--out", "/dev/null/results"],
     "--out /dev/null/results: /dev/null is a file, not a directory"),
    ("--out not creatable", [CLIFF, "--quick", "--out", "/proc/tabular-zoo"],
     "--out /proc/tabular-zoo: "),
    ("--replot --force", [CLIFF, "--replot", "--force"], "--force cannot apply to it"),
    ("--replot --set", [CLIFF, "--replot", "--set", "epsilon=0.2"], "--set cannot apply to it"),
    ("--replot --runs", [CLIFF, "--replot", "--runs", "3"], "--runs cannot apply to it"),
    ("--replot nothing there", [CLIFF, "--replot", "--out", "/nonexistent/results"],
     "--out /nonexistent/results is not a directory: nothing to replot"),
]
CLI_ROWS = [(f"cli {name}", cli(*argv), SystemExit, fragment) for name, argv, fragment in CLI_BAD]

PYTHON_ROWS = [
    ("run_experiment unknown name", lambda: runner.run_experiment("cliff"), KeyError,
     "unknown experiment 'cliff'"),
    ("run_experiment wait negative", lambda: runner.run_experiment(CLIFF, wait=-1), ValueError,
     "wait must be None or a number of seconds >= 0, got -1"),
    ("run_experiment wait NaN", lambda: runner.run_experiment(CLIFF, wait=math.nan), ValueError,
     "wait must be None or a number of seconds >= 0, got nan"),
    ("run_experiment wait text", lambda: runner.run_experiment(CLIFF, wait="5"), ValueError,
     "wait must be None or a number of seconds >= 0, got '5'"),
    ("run_experiment runs 0", lambda: runner.run_experiment(CLIFF, runs=0), ValueError,
     "runs must be an integer >= 1, got 0"),
    ("run_experiment runs fraction", lambda: runner.run_experiment(CLIFF, runs=2.5), ValueError,
     "runs must be an integer >= 1, got 2.5"),
    ("replot wait negative", lambda: runner.replot(CLIFF, "results", wait=-0.5), ValueError,
     "wait must be"),
    ("make_config int as float", config(episodes=1.5), TypeError,
     "episodes takes a int, got 1.5 (float)"),
    ("make_config int as bool", config(episodes=True), TypeError,
     "episodes takes a int, got True (bool)"),
    ("make_config float as bool", config(epsilon=np.True_), TypeError,
     "epsilon takes a float, got"),
    ("make_config float NaN", config(epsilon=math.nan), ValueError, "epsilon is NaN"),
    ("make_config float as None", config(epsilon=None), TypeError,
     "epsilon takes a float, got None"),
    ("make_config sequence as scalar", config("random_walk", td_alphas=0.1), TypeError,
     "td_alphas takes comma-separated floats (a tuple or list), got 0.1"),
    ("make_config sequence item", config("random_walk", td_alphas=(0.1, "x")), TypeError,
     "td_alphas takes comma-separated floats"),
    ("parse_value bool 1", lambda: parse_value("flag", bool, "1"), ValueError,
     "flag takes a bool, got '1': '1' is not a bool (true or false)"),
    ("parse_value bool yes", lambda: parse_value("flag", bool, "yes"), ValueError,
     "flag takes a bool, got 'yes'"),
    ("parse_value bool empty", lambda: parse_value("flag", bool, ""), ValueError,
     "flag takes a bool, got ''"),
    ("parse_value bool sequence", lambda: parse_value("flags", tuple[bool, ...], "true,0"),
     ValueError, "flags takes comma-separated bools, got 'true,0'"),
    ("check_value bool as int", lambda: check_value("flag", bool, 1), TypeError,
     "flag takes a bool, got 1 (int)"),
    ("check_value str as number", lambda: check_value("label", str, 3), TypeError,
     "label takes a str, got 3"),
    ("LocalExecutor workers 0", lambda: LocalExecutor(workers=0), ValueError,
     "workers must be an integer >= 1, got 0"),
    ("LocalExecutor workers -1", lambda: LocalExecutor(workers=-1), ValueError,
     "workers must be an integer >= 1, got -1"),
    ("LocalExecutor workers text", lambda: LocalExecutor(workers="2"), ValueError,
     "workers must be an integer >= 1, got '2'"),
    ("make_executor unknown", lambda: make_executor("slurm"), ValueError,
     "backend must be one of ('local', 'ray'), got 'slurm'"),
]

ROWS = CLI_ROWS + PYTHON_ROWS


@pytest.mark.parametrize("call, error, fragment", [row[1:] for row in ROWS],
                         ids=[row[0] for row in ROWS])
def test_bad_input_is_a_clear_error(call, error, fragment, capsys):
    with pytest.raises(error) as info:
        call()
    if error is SystemExit:
        assert info.value.code not in (0, None)
        err = capsys.readouterr().err
        assert fragment in err and "Traceback" not in err, err
    else:
        assert fragment in str(info.value), str(info.value)


def test_valid_flags_and_numbers_still_parse():
    assert parse_value("flag", bool, "true") is True
    assert parse_value("flag", bool, "False") is False
    assert parse_value("flags", tuple[bool, ...], "true, false") == (True, False)
    assert check_value("epsilon", float, 1) == 1.0 and type(check_value("x", float, 1)) is float
    assert type(check_value("episodes", int, np.int64(3))) is int
    assert registry.make_config(registry.load(CLIFF), settings={"epsilon": np.float64(0.2)}
                              ).epsilon == 0.2
