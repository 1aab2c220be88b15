"""RL's razor on two prompt families: fine-tuning a small n-gram model on one task by
on-policy RL and by SFT, with the forgetting of the other task measured exactly.

Claim (Shenfeld et al., 2025, "RL's razor: why online reinforcement learning forgets
less"): forgetting follows the forward KL ``KL(pi_0 || pi)`` from the base model,
measured on the new task, and on-policy RL, among the policies that solve the new task,
finds one close to the base in that KL, where SFT on a fixed target need not. Here a
trigram model is pre-trained on a small corpus answering "Say hello." and "Say bye.";
the new task is "Say hello." (a response starting with "hello" is correct). RL is
REINFORCE on that prompt alone, rewarded for correctness; SFT fits one correct target,
"hello friend". The two prompts share every trigram context after the first response
token, so training on one moves the other. At each checkpoint, exactly: the new task's
success, the forward KL on it, and the forgetting on "Say bye.", ``KL(pi_0 || pi)``
there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import reinforce
from tabular.envs import TokenMDP
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import NGramLM, ending_probabilities, path_returns, pretrain, sft

NEW, OLD = "Say hello.", "Say bye."
VOCAB = ("Say", "hello", "bye", ".", "friend", "there", "now")
CORPUS = ("Say hello. hello there", "Say hello. hello", "Say bye. bye now", "Say bye. bye",
          "Say hello. hello friend", "Say bye. bye friend", "hello there now", "bye there")
LEARNERS = ("SFT", "RL")

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Shenfeld et al. (2025), RL's razor: "
              "forgetting follows the forward KL to the base on the new task, and on-policy "
              "RL finds a KL-smaller solution than SFT")


@dataclass(frozen=True)
class Config(Settings):
    """A trigram model, two prompts, the new task "Say hello."."""

    sft_epochs: tuple[int, ...] = (2, 5, 10, 20, 60)
    """SFT's checkpoints (epochs on the one target)."""
    rl_episodes: tuple[int, ...] = (10, 25, 50, 100, 200, 1000)
    """RL's checkpoints (REINFORCE episodes)."""
    alpha: float = 0.5
    """Step size of both."""
    seed: int = 0
    """Seed of REINFORCE's stream (pre-training and SFT draw nothing)."""

    QUICK = {}
    REFERENCE = "the calibration"


def _gold(x, y):
    word = "hello" if x == NEW else "bye"
    return 1.0 if y.split()[:1] == [word] else 0.0


def run(config: Config, executor) -> dict:
    base = pretrain(NGramLM.create(VOCAB, 3), list(CORPUS), epochs=30, alpha=0.5).lm
    new, old = (TokenMDP((x,), _gold, max_len=3, vocab=base.vocab) for x in (NEW, OLD))

    def standing(model, env):
        m = env.to_mdp()
        e = ending_probabilities(m, model.policy(env))
        e0 = ending_probabilities(m, base.policy(env))
        on = e0 > 0
        with np.errstate(divide="ignore"):
            kl = float(np.sum(e0[on] * (np.log(e0[on]) - np.log(e[on]))))
        return float((e * path_returns(m)).sum()), kl

    rows = []
    for epochs in config.sft_epochs:
        model = sft(base, [(NEW, "hello friend")], epochs=epochs, alpha=config.alpha).lm
        rows.append([0, *standing(model, new), *standing(model, old)])
    for episodes in config.rl_episodes:
        res = reinforce(new.to_mdp(), base.policy(new), episodes=episodes, alpha=config.alpha,
                        seed=config.seed)
        model = base.with_logits(res.logits)
        rows.append([1, *standing(model, new), *standing(model, old)])
    rows = np.array(rows)
    return {"learner": rows[:, 0].astype(int), "success": rows[:, 1], "kl_new": rows[:, 2],
            "success_old": rows[:, 3], "forgetting": rows[:, 4],
            "base": np.array([*standing(base, new), *standing(base, old)])}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.0, height=4.0, title="RL's razor, exactly")
    for i, name in enumerate(LEARNERS):
        mine = results["learner"] == i
        color = style.PALETTE[i + 1]
        axes[0, 0].plot(results["kl_new"][mine], results["success"][mine], "o-", color=color,
                        label=name)
        axes[0, 1].plot(results["kl_new"][mine], results["forgetting"][mine], "o-",
                        color=color, label=name)
    axes[0, 0].set_xlabel("KL(pi_0 || pi) on the new task")
    axes[0, 0].set_ylabel('success on "Say hello."')
    axes[0, 1].set_xlabel("KL(pi_0 || pi) on the new task")
    axes[0, 1].set_ylabel('forgetting: KL(pi_0 || pi) on "Say bye."')
    for ax in axes[0]:
        ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "rl_razor.png")]


def _ranks(x):
    return np.argsort(np.argsort(x)).astype(float)


@check("sft_epochs", "rl_episodes", "alpha", "seed")
def razor(results: dict) -> list[Measure]:
    """The two claims as measured, held as the findings: at the first RL checkpoint as
    successful as SFT's last, RL's forward KL on the new task is the smaller (the razor:
    supported) but it forgets more on the other prompt (forgetting following that KL
    across learners: not supported here); within each learner forgetting rises with the
    forward KL (Spearman rank correlation > 0.8)."""
    sft_rows = np.flatnonzero(results["learner"] == 0)
    rl_rows = np.flatnonzero(results["learner"] == 1)
    last = sft_rows[-1]
    match = rl_rows[np.argmax(results["success"][rl_rows] >= results["success"][last])]
    measured = (f"RL {results['kl_new'][match]:.4f}, {results['forgetting'][match]:.5f}; "
                f"SFT {results['kl_new'][last]:.4f}, {results['forgetting'][last]:.5f}")
    out = [fact("at SFT's final success: forward KL on the new task, RL vs SFT",
                passed=results["kl_new"][match] < results["kl_new"][last], expected="RL below SFT",
                measured=measured, failure="RL's solution is not the KL-smaller one"),
           fact("at SFT's final success: forgetting, RL vs SFT",
                passed=results["forgetting"][match] > results["forgetting"][last],
                expected="RL above SFT (the claim not supported)", measured=measured,
                failure="RL now forgets less than SFT: the finding changed")]
    for name, mine in (("SFT", sft_rows), ("RL", rl_rows)):
        rho = float(np.corrcoef(_ranks(results["kl_new"][mine]),
                                _ranks(results["forgetting"][mine]))[0, 1])
        out.append(
            fact(
                f"{name}: rank correlation of forgetting with forward KL",
                passed=rho > 0.8,
                expected="> 0.8",
                measured=f"{rho:.3f}",
                failure=f"{name}'s forgetting does not follow its KL",
            )
        )
    return out
