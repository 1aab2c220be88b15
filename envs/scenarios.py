"""Scenario files of ``envs/data``: a prompt, its candidate replies and their data.

A scenario file has sections ``[settings]`` (``key | value``: the pre-training
``corpus`` file, the ``n`` of the n-gram model, ``max_len``), ``[prompt]``,
``[replies]`` (``name | text | gold reward | correct: yes/no``), ``[sft]``
(``count | reply name``: labeller demonstrations) and ``[preferences]`` (``count |
winner | loser``: labeller comparisons); ``#`` starts a comment line. The corpus
file holds one document a line.

The shipped scenario, ``capital_of_france``, is the running example of RLHF on a
question: "What is the capital of France?" with six replies, two correct, one
flattering (the reply a learned reward model over-rates, as in Gao et al., 2023).
Training on these data (pre-training, SFT, the reward model) is
:func:`tabular.rlhf.pipeline.train_pipeline`; this module only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tabular.lm import tokenize

from .token import RewardSpec, TokenMDP

DATA_DIR = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Scenario:
    """One prompt, its candidate replies, and the data to train on them.

    Attributes
    ----------
    prompt : the prompt ``x``.
    replies : the candidate replies ``y1 .. yk``, in file order.
    gold : the gold (human) reward of each reply.
    correct : whether each reply answers the question correctly.
    sft : ``(count, reply)`` supervised demonstrations.
    preferences : ``(count, winner, loser)`` labeller comparisons.
    corpus : the pre-training documents.
    n : the order of the scenario's n-gram language model.
    max_len : the most tokens of a reply (the token MDP's ``max_len``).
    """

    prompt: str
    replies: tuple[str, ...]
    gold: tuple[float, ...]
    correct: tuple[bool, ...]
    sft: tuple[tuple[int, str], ...]
    preferences: tuple[tuple[int, str, str], ...]
    corpus: tuple[str, ...]
    n: int
    max_len: int

    @property
    def vocab(self) -> tuple[str, ...]:
        """Every token of the corpus, the replies and the prompt, sorted."""
        return tuple(sorted({t for doc in self.corpus for t in tokenize(doc)}
                            | {t for r in self.replies for t in tokenize(r)}
                            | set(tokenize(self.prompt))))

    def env(self, reward: RewardSpec | None = None, **kwargs) -> TokenMDP:
        """The token MDP of the scenario: the vocabulary of all its texts, the replies as
        the grammar.

        ``reward``: ``None`` (default) pays the gold reward of each reply; any
        :class:`~envs.token.TokenMDP` reward (a function ``(prompt, response) ->
        float``, such as a trained reward model, or a mapping) pays that instead.
        ``kwargs`` go to :class:`~envs.token.TokenMDP` (e.g. ``render_mode``).
        """
        if reward is None:
            reward = dict(zip(self.replies, self.gold, strict=True))
        return TokenMDP((self.prompt,), reward, vocab=self.vocab, max_len=self.max_len,
                        grammar=self.replies, **kwargs)


@cache
def load_scenario(name: str = "capital_of_france") -> Scenario:
    """Read ``envs/data/<name>.txt`` (default: the shipped running example) and its
    corpus file; the result is immutable, so it is read once per process."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in (DATA_DIR / f"{name}.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
        elif current is None:
            raise ValueError(f"{name}.txt: line {line!r} comes before any [section]")
        else:
            current.append(line)
    missing = {"settings", "prompt", "replies", "sft", "preferences"} - set(sections)
    if missing:
        raise ValueError(f"{name}.txt has no [{sorted(missing)[0]}] section")
    settings = dict(_fields(row, 2) for row in sections["settings"])
    replies = [_fields(row, 4) for row in sections["replies"]]  # name | text | gold | correct
    text_of = {label: text for label, text, _, _ in replies}

    def reply(label: str) -> str:
        if label not in text_of:
            raise ValueError(f"{name}.txt names reply {label!r}, which [replies] does not list")
        return text_of[label]

    corpus_file = DATA_DIR / settings["corpus"]
    corpus = tuple(line.strip() for line in corpus_file.read_text().splitlines()
                   if line.strip() and not line.startswith("#"))
    sft_rows = [_fields(row, 2) for row in sections["sft"]]
    preference_rows = [_fields(row, 3) for row in sections["preferences"]]
    return Scenario(
        prompt=sections["prompt"][0],
        replies=tuple(text for _, text, _, _ in replies),
        gold=tuple(float(g) for _, _, g, _ in replies),
        correct=tuple(c == "yes" for _, _, _, c in replies),
        sft=tuple((int(c), reply(y)) for c, y in sft_rows),
        preferences=tuple((int(c), reply(w), reply(lo)) for c, w, lo in preference_rows),
        corpus=corpus, n=int(settings["n"]), max_len=int(settings["max_len"]))


def _fields(row: str, k: int) -> list[str]:
    parts = [p.strip() for p in row.split("|")]
    if len(parts) != k:
        raise ValueError(f"scenario line {row!r} should have {k} fields separated by '|'")
    return parts


def capital_of_france(reward: str | RewardSpec = "gold", **kwargs) -> TokenMDP:
    """The registered ``tabzoo/CapitalOfFrance-v0``: the running example's token MDP.

    ``reward``: ``"gold"`` (default) pays the gold reward of each reply; any other
    :class:`~envs.token.TokenMDP` reward (for instance a trained reward model's
    ``score``) is optimised instead. ``kwargs`` go to :class:`~envs.token.TokenMDP`.
    """
    return load_scenario().env(None if reward == "gold" else reward, **kwargs)
