"""Dr. GRPO's two biases, exactly: how each ``loss_type`` moves the expected length of
correct and wrong answers, and how the std division reweights prompts by difficulty, on
a token MDP built to show them (prompts of three difficulties, correct and wrong answers
of every length from 1 to 4 tokens)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import SoftmaxPolicy
from tabular.envs import TokenMDP
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import ending_probabilities, expected_update, path_returns

LOSS_TYPES = ("sum", "grpo", "dr_grpo", "bnpo")

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "Liu et al. (2025), Dr. GRPO: GRPO's 1/|o| makes wrong answers longer (and correct "
    "ones shorter) and its std division reweights prompts by difficulty; disputed in "
    "sail-sg/understand-r1-zero issues #10 and #25"
)


@dataclass(frozen=True)
class Config(Settings):
    """Three prompts answered correctly (first token ``a``) with probabilities
    ``difficulties`` by the policy; after the first token every continuation (``a``,
    ``b`` or ``eos``) is equally likely, up to 4 tokens; reward 1 for a correct answer,
    0 for a wrong one, whatever its length; no KL (beta = 0)."""

    difficulties: tuple[float, ...] = (0.2, 0.5, 0.9)
    """The policy's probability of a correct answer on each prompt."""
    group_size: int = 4
    """Responses per group (every multiset of the others is enumerated)."""
    step: float = 1e-5
    """Step of the central differences of the exact expected lengths along the update."""

    REFERENCE = "the calibration"


def scenario(difficulties):
    """The token MDP and the policy of :class:`Config`."""
    prompts = ("a", "b", "a a", "b b", "a b")[:len(difficulties)]
    env = TokenMDP(prompts, lambda prompt, response: float(response.startswith("a")),
                   vocab=("a", "b"), max_len=4)
    mdp = env.to_mdp()
    logits = np.zeros((mdp.n_states, mdp.n_actions))
    for x, p in enumerate(difficulties):  # the roots: a correct or a wrong first token
        logits[x, env.token_id["a"]], logits[x, env.token_id["b"]] = np.log(p), np.log(1 - p)
        logits[x, env.eos_id] = -np.inf
    return env, mdp, SoftmaxPolicy(logits, np.arange(mdp.n_states))


def lengths(env, mdp, logits) -> tuple[float, float]:
    """``E[|o| | correct]`` and ``E[|o| | wrong]`` under ``softmax(logits)``, exactly."""
    ends = ending_probabilities(mdp, SoftmaxPolicy(logits, np.arange(mdp.n_states)))
    s, a = np.nonzero(ends)
    T = np.array([len(env.response_ids(int(mdp.next_state[i, j, 0]))) for i, j in zip(s, a,
                                                                                       strict=True)])
    correct = path_returns(mdp)[s, a] > 0.5
    p = ends[s, a]
    return (float(p[correct] @ T[correct] / p[correct].sum()),
            float(p[~correct] @ T[~correct] / p[~correct].sum()))


def run(config: Config, executor) -> dict:
    env, mdp, policy = scenario(config.difficulties)
    slope = np.empty((len(LOSS_TYPES), 2))
    for i, loss in enumerate(LOSS_TYPES):
        d = expected_update(mdp, policy, group_size=config.group_size, loss_type=loss,
                            scale_rewards="none", max_steps=4).direction
        up = lengths(env, mdp, policy.logits + config.step * d)
        down = lengths(env, mdp, policy.logits - config.step * d)
        slope[i] = (np.array(up) - np.array(down)) / (2 * config.step)
    P = len(config.difficulties)
    weight = np.empty((2, P))  # |E[d]| on each prompt's rows, std and no std
    for k, scale in enumerate(("group", "none")):
        d = expected_update(mdp, policy, group_size=config.group_size, loss_type="sum",
                            scale_rewards=scale, max_steps=4).direction
        root = np.array([env.state_prompt[s] for s in range(mdp.n_states)])
        weight[k] = [np.linalg.norm(d[root == x]) for x in range(P)]
    return {"loss_types": np.array(LOSS_TYPES), "slope": slope,
            "difficulties": np.array(config.difficulties), "weight": weight}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=4.4, height=3.6, title="Dr. GRPO's biases, exactly")
    ax = axes[0, 0]
    x = np.arange(len(results["loss_types"]))
    ax.bar(x - 0.2, results["slope"][:, 0], 0.4, label="correct", color=style.PALETTE[1])
    ax.bar(x + 0.2, results["slope"][:, 1], 0.4, label="wrong", color=style.PALETTE[2])
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(x, results["loss_types"])
    ax.set_ylabel("d E[|o|] / d step along E[d]")
    ax.set_title("length of correct / wrong answers", fontsize=9)
    ax.legend()
    ax = axes[0, 1]
    p = results["difficulties"]
    ratio = results["weight"][0] / results["weight"][1]
    ax.plot(p, ratio / ratio[0], "o-", label="std / no std (exact)")
    predicted = 1 / np.sqrt(p * (1 - p))
    ax.plot(p, predicted / predicted[0], "k--", label="1 / sqrt(p (1 - p))")
    style.label(ax, "P(correct) on the prompt", "update weight, relative",
                title="the std division reweights prompts", legend=8)
    return [style.save(fig, out_dir / "grpo_length_bias.png")]


def table(results: dict):
    header = ["loss_type", "dE[|o| correct]", "dE[|o| wrong]"]
    return header, [[name, number(results["slope"][i, 0]), number(results["slope"][i, 1])]
                    for i, name in enumerate(results["loss_types"])]


def _row(results, name):
    return list(results["loss_types"]).index(name)


@check("difficulties", "group_size")
def grpo_loss_lengthens_wrong_and_shortens_correct(results: dict) -> list[Measure]:
    """With ``loss_type="grpo"`` (1/|o|) the expected update lengthens wrong answers and
    shortens correct ones (Dr. GRPO's sign)."""
    correct, wrong = results["slope"][_row(results, "grpo")]
    return [
        above(
            "d E[|o| | wrong] / d step, grpo loss",
            measured=wrong,
            bound=1e-6,
            failure=f"the grpo loss does not lengthen wrong answers ({wrong:.3g})",
            why="sign",
        ),
        below(
            "d E[|o| | correct] / d step, grpo loss",
            measured=correct,
            bound=-1e-6,
            failure=f"the grpo loss does not shorten correct answers ({correct:.3g})",
            why="sign",
        ),
    ]


@check("difficulties", "group_size", "step")
def length_free_losses_leave_length_alone(results: dict) -> list[Measure]:
    """``sum`` and ``dr_grpo`` weigh every token of a response alike: the continuation
    after the first token gets no expected update (the advantage is fixed by it), so the
    expected lengths do not move."""
    out = []
    for name in ("sum", "dr_grpo"):
        s = np.abs(results["slope"][_row(results, name)]).max()
        out.append(below(f"|d E[|o|] / d step|, {name}", measured=s, bound=1e-8,
                         failure=f"{name} moves the expected length by {s:.3g}",
                         why="central differences, step 1e-5"))
    return out


@check("difficulties", "group_size")
def bnpo_bias_is_smaller(results: dict) -> list[Measure]:
    """``bnpo``/``dapo`` (one normaliser per batch of tokens) also lengthens wrong answers,
    through the correlation of a group's total length with its advantages, but less than
    ``grpo``'s 1/|o|."""
    b, g = results["slope"][_row(results, "bnpo")], results["slope"][_row(results, "grpo")]
    return [
        fact(
            "bnpo's length slopes: same signs as grpo's, smaller magnitudes",
            passed=bool(np.all(np.sign(b) == np.sign(g)) and np.all(np.abs(b) < np.abs(g))),
            expected=f"signs of ({number(g[0])}, {number(g[1])}), smaller",
            measured=f"({number(b[0])}, {number(b[1])})",
            failure="bnpo's length bias is not grpo's, smaller",
        )
    ]


@check("difficulties", "group_size")
def std_reweighting_is_far_below_one_over_std(results: dict) -> list[Measure]:
    """At G = 4 the std division's reweighting is much weaker than the population 1/std
    (``1/sqrt(p(1-p))``) suggests: a group's std is random, and a group whose rewards
    agree is only centred. Relative to the p = 0.5 prompt, the extreme prompts' weights
    stay within 10% where 1/std predicts 25% and 67%: the claim's magnitude is not
    supported at this group size (its sign is)."""
    ratio = results["weight"][0] / results["weight"][1]
    mid = int(np.argmin(np.abs(results["difficulties"] - 0.5)))
    spread = float(np.abs(ratio / ratio[mid] - 1).max())
    return [
        below(
            "largest |relative weight - 1| across prompts, std / no std",
            measured=spread,
            bound=0.1,
            failure=f"the std division reweights prompts by up to {spread:.3g}",
            why="measured, against 0.67 for 1/std",
        )
    ]


@check("difficulties", "group_size")
def std_upweights_easy_and_hard_prompts(results: dict) -> list[Measure]:
    """Dividing by the group's std multiplies a prompt's update by about 1/std, largest for
    the prompts the policy almost always (or almost never) answers correctly."""
    ratio = results["weight"][0] / results["weight"][1]
    p = results["difficulties"]
    order = np.argsort(p * (1 - p))  # smallest std first
    return [
        fact(
            "the prompt with the smallest p(1-p) gets the largest std/no-std weight",
            passed=bool(np.argmax(ratio) == order[0]),
            expected=f"prompt with p = {p[order[0]]:g}",
            measured=f"prompt with p = {p[np.argmax(ratio)]:g}",
            failure="the std division did not favour the extreme prompt",
        )
    ]
