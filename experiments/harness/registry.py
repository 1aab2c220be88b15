"""The experiments: which there are, where each lives, and what each one's settings are.

Each experiment is a module of ``tabular.experiments`` (a figure of the book under
``book/chNN/``, a lab's under ``rlhf/``, ``zoo/`` or ``explore/``), named in
:data:`MODULES`, with

- ``Config``: a :class:`~tabular.experiments.harness.settings.Settings` dataclass (one
  docstring per field) with a ``quick()`` variant;
- ``run(config, executor) -> dict[str, np.ndarray]``: all the computing;
- ``plot(results, out_dir, config) -> list[Path]``: figures drawn from the numbers alone;
- its checks, functions ``(results) -> list[Measure]`` marked with
  :func:`tabular.experiments.harness.checks.check` and the settings each holds at: every
  comparison made, each with its published or exact value, measured value and tolerance;
- optionally ``table(results) -> (header, rows)``: a small table, also written as CSV.

A figure imports the harness and the helper modules beside it (shared set-ups such as
``book/ch09/walk_setup.py``), never another figure; the harness reaches a figure only
through :func:`load` (``tests/house/test_layers.py`` holds both rules).

Any field of an experiment's ``Config`` can be set from the command line
(``--set epsilon=0.2``, typed from the field) or from Python
(``run_experiment("cliff_walking", "results", settings={"epsilon": 0.2})``); both
write the same files. A check that depends on a setting the run changed is reported
not applicable rather than run (:mod:`tabular.experiments.harness.checks`).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import textwrap
import typing
from types import ModuleType

from tabular.experiments.harness.settings import check_value, limits_error, parse_value

#: Every experiment's module under ``tabular.experiments``, in the order ``make
#: experiments`` runs them: the book's figures by chapter folder, then the labs.
MODULES: tuple[str, ...] = (
    "book.ch02.bandits",
    "book.ch01.tic_tac_toe",  # bandits stays first, as the runner tests use it
    "book.ch03.gridworld_values",
    "book.ch04.policy_evaluation",
    "book.ch04.contraction",
    "book.ch04.gambler",
    "book.ch04.car_rental",
    "book.ch05.blackjack",
    "book.ch05.racetrack",
    "book.ch06.random_walk",
    "book.ch06.batch_walk",
    "book.ch07.n_step_walk",
    "book.ch08.dyna_maze",
    "book.ch08.prioritized_sweeping",
    "book.ch08.expected_vs_sample",
    "book.ch08.trajectory_sampling",
    "book.ch12.lambda_walk",
    "book.ch09.state_aggregation",
    "book.ch09.n_step_aggregation",
    "book.ch09.fourier_polynomial",
    "book.ch09.tile_coding_walk",
    "book.ch10.mountain_car",
    "book.ch11.baird",
    "book.ch10.access_control",
    "book.ch11.gradient_td",
    "book.ch06.windy_gridworld",
    "book.ch06.cliff_walking",
    "book.ch06.cliff_alpha",
    "book.ch06.maximization_bias",
    "book.ch13.short_corridor",
    "book.ch13.short_corridor_baseline",
    "zoo.trap_treasure",
    "zoo.frozenlake",
    "explore.bandit_lai_robbins",
    "rlhf.token_rlhf",
    "rlhf.process_rewards",
    "rlhf.rlhf_leaderboard",
    "rlhf.nash_rps",
    "rlhf.dpo_vs_ipo",
    "rlhf.likelihood_displacement",
    "rlhf.simpo_drift",
    "rlhf.orpo_vs_sft_dpo",
    "rlhf.loss_optima",
    "rlhf.dpo_uncovered",
    "rlhf.xpo_coverage",
    "rlhf.rl_razor",
    "explore.exploration_regret",
    "explore.pac_exploration",
    "rlhf.grpo_stationary",
    "rlhf.grpo_kl_estimators",
    "rlhf.grpo_length_bias",
    "rlhf.grpo_token_sequence",
    "rlhf.grpo_group_size",
    "rlhf.grpo_clip_higher",
    "zoo.speed",
)

#: Every experiment's name (its module's last part): what the command line, the
#: ``OUT/NAME`` folders and the gallery call it.
EXPERIMENTS: tuple[str, ...] = tuple(module.rsplit(".", 1)[-1] for module in MODULES)


def load(name: str) -> ModuleType:
    """The module of experiment ``name``."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"tabular.experiments.{MODULES[EXPERIMENTS.index(name)]}")


def summary(name: str) -> str:
    """The experiment's description: the first paragraph of its docstring, on one line."""
    doc = (load(name).__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def config_fields(module: ModuleType) -> dict[str, tuple[type, str]]:
    """``{field: (type, docstring)}`` of an experiment's ``Config``, in order."""
    hints = typing.get_type_hints(module.Config)
    body = ast.parse(textwrap.dedent(inspect.getsource(module.Config))).body[0].body
    docs = {node.target.id: after.value.value
            for node, after in zip(body, body[1:], strict=False)
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)}
    return {f.name: (hints[f.name], docs.get(f.name, ""))
            for f in dataclasses.fields(module.Config)}


def make_config(module: ModuleType, quick: bool = False, runs: int | None = None,
                settings: dict | None = None):
    """The experiment's config: full or quick, with ``runs`` and ``settings`` (field ->
    value; a string is parsed as the field's type, anything else must have it) applied.
    Unknown fields are an error that lists the valid ones; a value outside the limits
    every setting keeps (:func:`~tabular.experiments.harness.settings.limits_error`) is an
    error naming the setting."""
    config = module.Config.quick() if quick else module.Config()
    fields = config_fields(module)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(fields))
    if unknown:
        raise ValueError(f"{module.__name__.rsplit('.', 1)[-1]} has no setting "
                         f"{', '.join(unknown)}; its settings are {', '.join(fields)}")
    values = {key: parse_value(key, fields[key][0], value)
              if isinstance(value, str) and fields[key][0] is not str
              else check_value(key, fields[key][0], value) for key, value in settings.items()}
    if runs is not None and "runs" in fields:
        values.setdefault("runs", runs)
    for key, value in values.items():
        problem = limits_error(module.Config, key, value, getattr(config, key))
        if problem:
            raise ValueError(f"{module.__name__.rsplit('.', 1)[-1]}: {problem}")
    return dataclasses.replace(config, **values)


def overrides(module: ModuleType, config, quick: bool = False) -> dict:
    """The settings of ``config`` that differ from the defaults of its mode (full or
    ``quick``), ``{setting: (value, default)}`` in field order."""
    base = module.Config.quick() if quick else module.Config()
    return {f.name: (getattr(config, f.name), getattr(base, f.name))
            for f in dataclasses.fields(config)
            if getattr(config, f.name) != getattr(base, f.name)}
