"""The experiments' command line as a user expects it (issue 42 item 5, issue 45 part 3): a
setting the library refuses is one line and exit status 2 naming the setting the user
gave; a comma list sweeps a setting, each point into its own folder; ``config.json``
records the values a run used; a figure that cannot be drawn keeps its numbers; a check
that depends on a setting the run changed is not applicable rather than failed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular.experiments.harness import cli, registry, runner, storage, style
from tabular.experiments.harness.settings import limits_error

CLIFF = "cliff_walking"


def one_line_error(capsys, argv: list[str]) -> tuple[int, str]:
    """The exit status of ``python -m tabular.experiments ARGV`` and its stderr, which
    must be one line without a traceback."""
    status = cli.main(argv)
    err = capsys.readouterr().err.strip()
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return status, lines[0]


def test_a_value_the_library_refuses_is_one_line_naming_the_setting(tmp_path, capsys):
    status, line = one_line_error(capsys, [CLIFF, "--quick", "--out", str(tmp_path),
                                           "--set", "alpha=2"])
    assert status == 2
    assert line.startswith("python -m tabular.experiments: error: cliff_walking --set alpha=2")
    assert "alpha must stay in (0.0, 1.0]" in line
    status, line = one_line_error(capsys, [CLIFF, "--quick", "--out", str(tmp_path),
                                           "--set", "runs=100000000"])
    assert status == 2 and "cliff_walking --set runs=100000000:" in line
    assert not (tmp_path / CLIFF).exists()  # nothing published
    assert not list(tmp_path.glob(".cliff_walking.staging*"))


@pytest.mark.parametrize("setting, fragment", [
    ("lams=", "lambda_walk: lams is empty"),
    ("alphas=", "lambda_walk: alphas is empty"),
    ("runs=0", "runs must be an integer >= 1 (a count, as its default 30), got 0"),
    ("seed=-1", "seed must be an integer >= 0"),
    (f"runs={10 ** 30}", "runs must fit in int64"),
])
def test_settings_outside_every_experiments_limits_stop_before_computing(setting, fragment,
                                                                        tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["lambda_walk", "--quick", "--out", str(tmp_path), "--set", setting])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1, err


def test_a_sweep_runs_each_point_into_its_own_folder_recording_the_values_used(tmp_path):
    assert cli.main(["gridworld_values", "--quick", "--out", str(tmp_path),
                     "--set", "gamma=0.8,0.95", "--set", "tol=1e-10"]) == 0
    assert not (tmp_path / "gridworld_values").exists()
    values = {}
    for gamma in ("0.8", "0.95"):
        folder = tmp_path / f"gridworld_values@gamma={gamma}"
        record = json.loads((folder / storage.CONFIG).read_text())
        assert record["config"]["gamma"] == float(gamma)
        # the values the run used, and beside them the defaults they replaced
        assert record["overrides"] == {"gamma": float(gamma), "tol": 1e-10}
        assert record["defaults"] == {"gamma": 0.9, "tol": 1e-8}  # --quick's
        assert storage.finished(folder, {"experiment": "gridworld_values"}) is not None
        values[gamma] = storage.load_numbers(folder / storage.NUMBERS)
    # two computations, not one copied
    assert not np.array_equal(values["0.8"]["V_star"], values["0.95"]["V_star"])
    page = (tmp_path / "index.html").read_text()
    assert 'id="gridworld_values@gamma=0.8"' in page and 'id="gridworld_values@gamma=0.95"' in page


def test_a_sequence_setting_takes_its_list_as_one_value():
    module = registry.load("random_walk")
    assert cli.sweep(module, {"td_alphas": "0.05,0.1"}) == [(None, {"td_alphas": "0.05,0.1"})]
    points = cli.sweep(registry.load(CLIFF), {"alpha": "0.1,0.5", "epsilon": "0.05,0.2"})
    assert [folder for folder, _ in points] == [
        "cliff_walking@alpha=0.1@epsilon=0.05", "cliff_walking@alpha=0.1@epsilon=0.2",
        "cliff_walking@alpha=0.5@epsilon=0.05", "cliff_walking@alpha=0.5@epsilon=0.2"]


def test_a_figure_that_fails_keeps_the_computation(tmp_path, monkeypatch, capsys):
    module = registry.load("gridworld_values")
    drawn = module.plot

    def broken(results, out_dir, config):
        drawn(results, out_dir, config)  # half the figures written, then a failure
        raise ValueError("smooth must be at most 5")

    monkeypatch.setattr(module, "plot", broken)
    assert cli.main(["gridworld_values", "--quick", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FIGURES NOT DRAWN (ValueError: smooth must be at most 5)" in out
    folder = tmp_path / "gridworld_values"
    record = json.loads((folder / storage.CONFIG).read_text())
    assert record["plot_error"] == "ValueError: smooth must be at most 5"
    assert record["files"] == [storage.NUMBERS] and not list(folder.glob("*.png"))
    assert all(c["status"] == "passed" for c in record["checks"])  # judged on the numbers
    numbers = storage.load_numbers(folder / storage.NUMBERS)
    monkeypatch.setattr(module, "plot", drawn)
    assert cli.main(["gridworld_values", "--quick", "--out", str(tmp_path), "--replot"]) == 0
    record = json.loads((folder / storage.CONFIG).read_text())
    assert record["plot_error"] is None and any(f.endswith(".png") for f in record["files"])
    assert storage.finished(folder, {"experiment": "gridworld_values"}) is not None
    again = storage.load_numbers(folder / storage.NUMBERS)
    assert all(np.array_equal(numbers[k], again[k]) for k in numbers)


def test_replot_of_damaged_numbers_is_one_line_and_status_2(tmp_path, capsys):
    assert cli.main(["gridworld_values", "--quick", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    (tmp_path / "gridworld_values" / storage.NUMBERS).write_bytes(b"PK\x03\x04 not a zip")
    status, line = one_line_error(capsys, ["gridworld_values", "--replot", "--out",
                                           str(tmp_path)])
    assert status == 2 and "holds a damaged run of gridworld_values" in line


def test_short_runs_draw_and_a_book_check_is_not_applicable(tmp_path):
    """``--set episodes=1`` on the cliff drew no figure (a 10-episode window); ``baird
    --set steps=50`` reported the tenfold growth of 1000 sweeps as failed."""
    outcome = runner.run_experiment(CLIFF, tmp_path, quick=True, settings={"episodes": 1})
    assert outcome.plot_error is None and "cliff_walking.png" in outcome.files
    outcome = runner.run_experiment("baird", tmp_path, quick=True, settings={"steps": 50})
    assert outcome.failures == []
    assert [v.name for v in outcome.not_applicable] == ["dp_weights_grow_tenfold"]
    assert style.window(10, np.zeros((3, 5))) == 5 and style.window(10, np.zeros(40)) == 10


def test_label_names_a_panel_and_refuses_an_unknown_axis():
    fig, axes = style.figure(1, 1)
    ax = axes[0, 0]
    ax.plot([1, 10], [1, 100], label="line")
    style.label(ax, "t", "regret", log="xy", title="panel", legend=7)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("t", "regret", "panel")
    assert ax.title.get_fontsize() == 9
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7
    for bad in ("z", "yx", None):
        with pytest.raises(ValueError, match="log names the axes"):
            style.label(ax, "t", "regret", log=bad)
    style.plt.close(fig)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_any_text_for_any_setting_is_a_config_within_limits_or_an_error_naming_it(data):
    """The ``--set`` property: whatever text a user gives any setting of any experiment,
    :func:`registry.make_config` returns a config whose changed settings keep their
    limits, or raises ``ValueError`` naming the setting; nothing else."""
    name = data.draw(st.sampled_from(registry.EXPERIMENTS))
    module = registry.load(name)
    key = data.draw(st.sampled_from(sorted(registry.config_fields(module))))
    text = data.draw(st.one_of(
        st.text(alphabet="0123456789.,-+eEinfatrus ()x", max_size=12),
        st.sampled_from(["", "0", "-1", "1e400", "nan", "inf", "2", f"{10 ** 30}", ",",
                         "true", "0.5,0.1", "1,,2"])))
    try:
        config = registry.make_config(module, quick=True, settings={key: text})
    except ValueError as err:
        assert key in str(err), (name, key, text, str(err))
        return
    value, default = getattr(config, key), getattr(module.Config.quick(), key)
    assert limits_error(module.Config, key, value, default) == "", (name, key, text)
