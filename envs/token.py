"""The token MDP: text generation as a finite Markov decision process.

A state is a prompt plus the tokens generated so far; an action is the next
token; the transition appends it (deterministic); the episode ends at the
end-of-sequence token or when the response reaches ``max_len`` tokens, and the
reward ``r(prompt, response)`` arrives on that last token (seed 000, section 10:
"the state is the prompt plus the tokens generated so far ... the transition is
deterministic: appending the chosen token").

Reaching ``max_len`` is ``terminated``, not ``truncated``: the length is part of the
state, so the model is exactly finite-horizon. The observation is the state id;
``info`` carries the prompt, the decoded response so far, its tokens, and the
mask of tokens the grammar allows next; ``render()`` (mode ``"ansi"``) shows the
conversation.

Because the state holds the whole prefix, the reachable states form a tree, and
:meth:`TokenMDP.to_mdp` enumerates it into a :class:`tabular.TabularMDP`, so
every planner and learner of the zoo runs on text.

Grammar and illegal tokens. ``grammar`` may list the allowed responses (a trie of
continuations). The MDP keeps all ``A`` actions in every state, so the model stays
one rectangular array: a token the grammar forbids ends the episode where it
stands (the observation does not change) with reward ``illegal_reward``. A
language-model policy masks such tokens with ``-inf`` logits
(:meth:`tabular.lm.NGramLM.policy`), so it never produces them, and a reference
policy that gives them probability 0 keeps them out of the KL-regularised optimum.

States are numbered breadth-first, prompt roots first, so a prefix always has a
smaller id than its continuations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tabular import SoftmaxPolicy, TabularMDP, soft_value_iteration
from tabular.lm import EOS, NGramLM, detokenize, pretrain, sft, tokenize
from tabular.rlhf import (
    RewardModel,
    expected_return,
    response_distribution,
    sequence_kl,
    train_reward_model,
)

DATA_DIR = Path(__file__).parent / "data"


RewardSpec = Callable[[str, str], float] | Mapping


class TokenMDP(gym.Env):
    """Generate a response token by token; the reward is paid on the last token.

    Parameters
    ----------
    prompts: the prompts (strings); ``prompt_probs`` is the start distribution
        over them (uniform by default).
    reward: ``reward(prompt, response) -> float``, or a mapping from
        ``(prompt, response)`` or ``response`` strings to rewards (missing
        responses earn ``default_reward``).
    vocab: the token strings (actions). Defaults to every token of the prompts and
        the grammar, sorted; the end-of-sequence token ``eos`` is appended if absent.
    max_len: the most tokens a response may have (``eos`` counts as a token).
    grammar: ``None`` (every token allowed everywhere), a list of allowed responses
        for every prompt, or a mapping ``prompt -> list of responses``.
    illegal_reward: paid when a forbidden token ends the episode.
    max_states: the largest prefix tree the env will enumerate (the tree is built
        with the env, as its size is the observation space); a bigger tree is refused,
        counted in closed form or on the grammar's trie, before anything is allocated.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, prompts: Sequence[str] = ("Say hello.",), reward: RewardSpec | None = None,
                 *, vocab: Sequence[str] | None = None, max_len: int = 3,
                 prompt_probs: Sequence[float] | None = None,
                 grammar: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
                 eos: str = EOS, illegal_reward: float = -1.0, default_reward: float = 0.0,
                 max_states: int = 100_000, render_mode: str | None = None):
        if isinstance(prompts, str):
            prompts = (prompts,)
        self.prompts = tuple(prompts)
        if not self.prompts or len(set(self.prompts)) != len(self.prompts):
            raise ValueError(f"prompts must list one or more distinct prompts, got {prompts!r}")
        if reward is None:
            reward = {"hello": 1.0}  # the default task: answer "Say hello." with "hello"
        if int(max_len) != max_len or max_len < 1:
            raise ValueError(f"max_len must be an integer >= 1, got {max_len!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} "
                             f"or None, got {render_mode!r}")
        self.max_len = int(max_len)
        self.eos = eos
        self.illegal_reward = float(illegal_reward)
        self.default_reward = float(default_reward)
        self.max_states = int(max_states)
        self.render_mode = render_mode

        allowed = _grammar_per_prompt(grammar, self.prompts)
        if vocab is None:
            words = {t for p in self.prompts for t in tokenize(p)}
            if allowed is not None:
                words |= {t for rs in allowed for r in rs for t in tokenize(r)}
            words.discard(eos)
            vocab = sorted(words)
        self.vocab = tuple(vocab) if eos in vocab else (*vocab, eos)
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError("vocab lists a token twice")
        self.token_id = {t: i for i, t in enumerate(self.vocab)}
        self.eos_id = self.token_id[eos]
        self.prompt_tokens = tuple(self.encode(p, f"prompt {p!r}") for p in self.prompts)
        self._tries = None if allowed is None else [
            _trie([self.encode(r, f"grammar response {r!r}") + (self.eos_id,) for r in rs])
            for rs in allowed]
        self._reward = _reward_function(reward, self.default_reward)

        if prompt_probs is None:
            prompt_probs = np.full(len(self.prompts), 1.0 / len(self.prompts))
        self.prompt_probs = np.asarray(prompt_probs, dtype=np.float64)
        if (self.prompt_probs.shape != (len(self.prompts),) or (self.prompt_probs < 0).any()
                or abs(self.prompt_probs.sum() - 1.0) > 1e-9):
            raise ValueError(f"prompt_probs must be a distribution over the {len(self.prompts)} "
                             f"prompts, got {prompt_probs!r}")

        self._check_size()
        self._enumerate()
        self.observation_space = spaces.Discrete(self.n_states)
        self.action_space = spaces.Discrete(len(self.vocab))
        self._s = 0

    # ----------------------------------------------------------------- text
    def encode(self, text: str, what: str = "text") -> tuple[int, ...]:
        """Token ids of ``text``; an unknown word is an error naming it."""
        ids = []
        for tok in tokenize(text):
            if tok not in self.token_id:
                raise ValueError(f"{what}: token {tok!r} is not in the vocabulary")
            ids.append(self.token_id[tok])
        return tuple(ids)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids (the end-of-sequence token is dropped)."""
        return detokenize([self.vocab[i] for i in ids if i != self.eos_id])

    # ----------------------------------------------------------- the tree
    def legal_tokens(self, prompt: int, response: tuple[int, ...]) -> tuple[int, ...]:
        """Tokens the grammar allows after ``response`` to prompt number ``prompt``."""
        if self._tries is None:
            return tuple(range(len(self.vocab)))
        node = self._tries[prompt]
        for tok in response:
            node = node[tok]
        return tuple(sorted(node))

    def _ends(self, response: tuple[int, ...]) -> bool:
        return (bool(response) and response[-1] == self.eos_id) or len(response) >= self.max_len

    def _check_size(self) -> None:
        """Refuse a tree larger than ``max_states`` before building it."""
        if self._tries is None:  # every token everywhere: a closed form
            A, L = len(self.vocab), self.max_len
            open_prefixes = sum((A - 1) ** k for k in range(L))  # no eos, shorter than L
            finished = sum((A - 1) ** k for k in range(L - 1)) + A * (A - 1) ** (L - 1)
            total = len(self.prompts) * (open_prefixes + finished)
        else:
            total = sum(_trie_size(t, 0, self.max_len) for t in self._tries)
        if total > self.max_states:
            raise ValueError(f"the prefix tree has {total} states, more than max_states="
                             f"{self.max_states}; shorten max_len (={self.max_len}), shrink "
                             f"the vocabulary (={len(self.vocab)} tokens), add a grammar, or "
                             "raise max_states")

    def _enumerate(self) -> None:
        prompt_of, response_of = [], []
        frontier = [(p, ()) for p in range(len(self.prompts))]
        while frontier:
            nxt = []
            for p, resp in frontier:
                prompt_of.append(p)
                response_of.append(resp)
                if not self._ends(resp):
                    nxt.extend((p, resp + (a,)) for a in self.legal_tokens(p, resp))
            frontier = nxt
        self.state_prompt = np.asarray(prompt_of, dtype=np.int64)
        self.state_response = tuple(response_of)
        pairs = zip(prompt_of, response_of, strict=True)
        self._state_id = {(p, r): s for s, (p, r) in enumerate(pairs)}
        S, A = len(prompt_of), len(self.vocab)
        self.n_states = S
        self.terminal = np.array([self._ends(r) for r in response_of])
        self.legal = np.zeros((S, A), dtype=bool)
        next_state = np.repeat(np.arange(S)[:, None], A, axis=1)
        reward = np.zeros((S, A))
        done = np.ones((S, A), dtype=bool)
        for s, (p, resp) in enumerate(zip(prompt_of, response_of, strict=True)):
            if self.terminal[s]:
                continue  # a finished response: every action stays put, pays 0, ends
            reward[s, :] = self.illegal_reward
            for a in self.legal_tokens(p, resp):
                child = resp + (a,)
                self.legal[s, a] = True
                next_state[s, a] = self._state_id[(p, child)]
                done[s, a] = self._ends(child)
                reward[s, a] = self.reward(p, child) if done[s, a] else 0.0
        self.next_state, self.reward_table, self.done_table = next_state, reward, done
        self.start = np.zeros(S)
        self.start[: len(self.prompts)] = self.prompt_probs

    def reward(self, prompt: int, response: tuple[int, ...]) -> float:
        """``r(x, y)`` of a finished response (token ids), as the reward function says."""
        value = float(self._reward(self.prompts[prompt], self.decode(response)))
        if np.isnan(value) or value == np.inf:
            raise ValueError(f"reward of prompt {self.prompts[prompt]!r}, response "
                             f"{self.decode(response)!r} is {value}")
        return value

    def state_of(self, prompt: int | str, response: str | Sequence[int] = ()) -> int:
        """The state id of a prompt (number or text) and a response prefix (text or ids)."""
        p = self.prompts.index(prompt) if isinstance(prompt, str) else int(prompt)
        ids = self.encode(response) if isinstance(response, str) else tuple(response)
        try:
            return self._state_id[(p, ids)]
        except KeyError:
            raise KeyError(f"response {self.decode(ids)!r} to prompt {self.prompts[p]!r} is "
                           "not a state of this token MDP (grammar or max_len)") from None

    def final_state(self, prompt: int | str, response: str) -> int:
        """The terminal state of a complete response (``eos`` appended if it fits)."""
        ids = self.encode(response)
        if len(ids) < self.max_len:
            ids = ids + (self.eos_id,)
        return self.state_of(prompt, ids)

    def context(self, s: int) -> tuple[int, ...]:
        """The whole token sequence of state ``s``: prompt tokens, then response tokens."""
        return self.prompt_tokens[self.state_prompt[s]] + self.state_response[s]

    def text(self, s: int) -> str:
        return self.decode(self.state_response[s])

    @cached_property
    def state_labels(self) -> tuple[str, ...]:
        return tuple(f"{self.prompts[p]} | {self.decode(r)}" + (" <eos>" if r and
                     r[-1] == self.eos_id else "")
                     for p, r in zip(self.state_prompt, self.state_response, strict=True))

    def to_mdp(self) -> TabularMDP:
        """The exact model: the prefix tree as padded arrays (``K = 1``)."""
        return TabularMDP(self.next_state[:, :, None], np.ones((self.n_states, len(self.vocab), 1)),
                          self.reward_table[:, :, None], self.done_table[:, :, None], self.start,
                          state_labels=self.state_labels, action_names=self.vocab)

    # ------------------------------------------------------------ gymnasium
    def _info(self) -> dict:
        s = self._s
        return {"prompt": self.prompts[self.state_prompt[s]], "response": self.text(s),
                "tokens": tuple(self.vocab[i] for i in self.state_response[s]),
                "legal": self.legal[s].copy()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._s = int(self.np_random.choice(len(self.prompts), p=self.prompt_probs))
        return self._s, self._info()

    def step(self, action):
        a = int(action)
        if not 0 <= a < len(self.vocab):
            raise ValueError(f"action {action!r} is not a token id in [0, {len(self.vocab)})")
        s = self._s
        self._s = int(self.next_state[s, a])
        return (self._s, float(self.reward_table[s, a]), bool(self.done_table[s, a]), False,
                self._info())

    def render(self):
        if self.render_mode != "ansi":
            return None
        s = self._s
        end = " <eos>" if self.state_response[s][-1:] == (self.eos_id,) else ""
        return f"User: {self.prompts[self.state_prompt[s]]}\nAssistant: {self.text(s)}{end}\n"


def _grammar_per_prompt(grammar, prompts) -> list[list[str]] | None:
    if grammar is None:
        return None
    if isinstance(grammar, str):
        raise ValueError("grammar must be a list of responses or a mapping prompt -> responses, "
                         "not one string")
    if isinstance(grammar, Mapping):
        missing = [p for p in prompts if p not in grammar]
        if missing:
            raise ValueError(f"grammar lists no responses for prompt {missing[0]!r}")
        per_prompt = [list(grammar[p]) for p in prompts]
    else:
        per_prompt = [list(grammar)] * len(prompts)
    for p, rs in zip(prompts, per_prompt, strict=True):
        if not rs:
            raise ValueError(f"grammar lists no responses for prompt {p!r}")
    return per_prompt


def _trie(sequences) -> dict:
    root: dict = {}
    for seq in sequences:
        node = root
        for tok in seq:
            node = node.setdefault(tok, {})
    return root


def _trie_size(node: dict, depth: int, max_len: int) -> int:
    """States under a trie node: itself plus every continuation up to ``max_len`` tokens."""
    if depth >= max_len or not node:
        return 1
    return 1 + sum(_trie_size(child, depth + 1, max_len) for child in node.values())


def _reward_function(reward, default: float) -> Callable[[str, str], float]:
    if callable(reward):
        return reward
    if isinstance(reward, Mapping):
        table = dict(reward)

        def lookup(prompt: str, response: str) -> float:
            if (prompt, response) in table:
                return table[(prompt, response)]
            return table.get(response, default)

        return lookup
    raise TypeError(f"reward must be a callable (prompt, response) -> float or a mapping, "
                    f"got {type(reward).__name__}")


# ------------------------------------------------------------------ the scenario
@dataclass(frozen=True)
class Scenario:
    """The running example of seed 000: one prompt, six candidate replies and their data.

    Read from ``envs/data/capital_of_france.txt``; the pre-training corpus is
    ``envs/data/capital_corpus.txt`` (one document per line).
    """

    prompt: str
    replies: tuple[str, ...]          # y1 .. y6
    gold: tuple[float, ...]           # the gold (human) reward of each reply
    correct: tuple[bool, ...]         # does the reply answer the question correctly
    sft: tuple[tuple[int, str], ...]  # (count, response) demonstrations
    preferences: tuple[tuple[int, str, str], ...]  # (count, winner, loser)
    corpus: tuple[str, ...]
    n: int                            # the n of the scenario's n-gram model
    max_len: int

    def env(self, reward: RewardSpec | None = None, **kwargs) -> TokenMDP:
        """The token MDP of the scenario; the reward defaults to the gold reward."""
        if reward is None:
            reward = dict(zip(self.replies, self.gold, strict=True))
        vocab = sorted({t for doc in self.corpus for t in tokenize(doc)}
                       | {t for r in self.replies for t in tokenize(r)}
                       | set(tokenize(self.prompt)))
        return TokenMDP((self.prompt,), reward, vocab=vocab, max_len=self.max_len,
                        grammar=self.replies, **kwargs)


def load_scenario(name: str = "capital_of_france") -> Scenario:
    """Parse a scenario file of ``envs/data`` (sections ``[prompt]``, ``[replies]``, ...)."""
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
    """The registered ``tabular/CapitalOfFrance-v0``: the running example's token MDP.

    ``reward="gold"`` pays the gold reward of each reply; pass any reward function
    (for instance a trained reward model's ``score``) to optimise that instead.
    """
    scenario = load_scenario()
    return scenario.env(None if reward == "gold" else reward, **kwargs)


# ------------------------------------------------------------ the running example
@dataclass(frozen=True)
class FrontierPoint:
    """Where a policy stands: ``KL(pi || SFT)`` over whole replies, its expected proxy
    (reward-model) and gold rewards, and the RLHF objective ``proxy - beta * kl``."""

    kl: float
    proxy: float
    gold: float


@dataclass(frozen=True)
class Frontier:
    """The exact KL-regularised optimum ``pi*_beta`` for each ``beta`` (arrays over betas)."""

    betas: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray

    @property
    def objective(self) -> np.ndarray:
        return self.proxy - self.betas * self.kl


@dataclass(frozen=True)
class RunningExample:
    """Seed 000's running example, trained end to end from the shipped data.

    ``base``: the n-gram model pre-trained on the corpus; ``sft``: after supervised
    fine-tuning on the demonstrations; ``reward_model``: Bradley-Terry on the
    labeller comparisons, normalised so the six replies average 0; ``env`` pays the
    reward model's score (the proxy), ``gold_env`` the gold reward; ``reference``:
    the SFT model as a per-prefix policy of ``env`` (the reference of RLHF).
    """

    scenario: Scenario
    base: NGramLM
    sft: NGramLM
    reward_model: RewardModel
    env: TokenMDP
    gold_env: TokenMDP
    mdp: TabularMDP
    gold_mdp: TabularMDP
    reference: SoftmaxPolicy

    def policy(self, lm: NGramLM) -> SoftmaxPolicy:
        """A language model as a (per-prefix, grammar-masked) policy of ``env``."""
        return lm.policy(self.env, per_state=True)

    def answer_distribution(self, policy) -> dict[str, float]:
        """``P(y | x)`` of each reply, exactly, by enumerating the prefix tree."""
        dist = response_distribution(self.env, policy)
        return {y: dist.get((self.scenario.prompt, y), 0.0) for y in self.scenario.replies}

    def correct_rate(self, policy) -> float:
        """The probability that the reply answers the question correctly."""
        dist = self.answer_distribution(policy)
        return sum(dist[y] for y, ok in zip(self.scenario.replies, self.scenario.correct,
                                            strict=True) if ok)

    def value(self, policy, reward: str = "proxy") -> float:
        """``V(x) = E_{y ~ pi}[r(x, y)]`` under the reward model or the gold reward."""
        return expected_return(self.mdp if reward == "proxy" else self.gold_mdp, policy)

    def optimum(self, beta: float) -> np.ndarray:
        """``pi*_beta [S, A]`` from soft value iteration on the prefix tree (gamma = 1)."""
        return soft_value_iteration(self.mdp, gamma=1.0, beta=beta,
                                    ref_policy=self.reference).policy

    def measure(self, policy) -> FrontierPoint:
        """KL to the SFT reference, proxy and gold reward of any policy of ``env``."""
        return FrontierPoint(sequence_kl(self.mdp, policy, self.reference),
                             self.value(policy, "proxy"), self.value(policy, "gold"))

    def frontier(self, betas) -> Frontier:
        """Reward against KL along the exact optimum ``pi*_beta`` (Gao et al., 2023):
        the proxy rises as ``beta`` shrinks, the gold reward rises, then falls."""
        betas = np.asarray(betas, dtype=np.float64)
        return _frontier(betas, [self.measure(self.optimum(b)) for b in betas])

    def learner_frontier(self, learner, betas, **kwargs) -> Frontier:
        """The same curve followed by a learner (``tabular.ppo``, ``reinforce``, ...):
        started at SFT with ``kl_coef = beta`` towards it; ``kwargs`` go to the learner
        (run 0 is measured when ``runs > 1``)."""
        betas = np.asarray(betas, dtype=np.float64)
        return _frontier(betas, [
            self.measure(learner(self.mdp, self.reference, ref_policy=self.reference,
                                 kl_coef=float(b), **kwargs).policy) for b in betas])


def _frontier(betas: np.ndarray, points: list[FrontierPoint]) -> Frontier:
    return Frontier(betas, *(np.array([getattr(p, f) for p in points])
                             for f in ("kl", "proxy", "gold")))


@cache
def running_example() -> RunningExample:
    """Pre-train, fine-tune and fit the reward model of the running example (cached)."""
    sc = load_scenario()
    gold_env = sc.env()
    base = pretrain(NGramLM.create(gold_env.vocab, sc.n), sc.corpus).lm
    tuned = sft(base, [(c, sc.prompt, y) for c, y in sc.sft]).lm
    rm = train_reward_model([(c, sc.prompt, w, lo) for c, w, lo in sc.preferences],
                            reference=[(sc.prompt, y) for y in sc.replies])
    env = sc.env(reward=rm.score)
    return RunningExample(sc, base, tuned, rm, env, gold_env, env.to_mdp(), gold_env.to_mdp(),
                          tuned.policy(env, per_state=True))


def register_token_envs() -> None:
    """Register ``tabular/TokenMDP-v0`` (the class with its defaults: answer "Say hello."
    with "hello") and ``tabular/CapitalOfFrance-v0`` (the running example, gold reward)."""
    gym.register(id="tabular/TokenMDP-v0", entry_point="envs.token:TokenMDP")
    gym.register(id="tabular/CapitalOfFrance-v0", entry_point="envs.token:capital_of_france")


register_token_envs()
