"""The token MDP: text generation as a finite Markov decision process.

A state is a prompt plus the tokens generated so far; an action is the next
token; the transition appends it (deterministic); the episode ends at the
end-of-sequence token or when the response reaches ``max_len`` tokens, and the
reward ``r(prompt, response)`` arrives on that last token (the bandit-per-episode
view of RLHF: Ziegler et al., 2019; Ouyang et al., 2022).

Reaching ``max_len`` is ``terminated``, not ``truncated``: the length is part of the
state, so the model is exactly finite-horizon. The observation is the state id;
``info`` carries the prompt, the decoded response so far, its tokens, and the
mask of tokens the grammar allows next; ``render()`` (mode ``"ansi"``) shows the
conversation.

Because the state holds the whole prefix, the reachable states form a tree. The
env enumerates it into a :class:`tabular.TabularMDP` when it is built and steps
from that model (:class:`tabular.envs.base.ModelEnv`), so ``env.step`` and
``env.unwrapped.to_mdp()`` cannot disagree, and every planner and learner of the zoo
runs on text.

Grammar and illegal tokens. ``grammar`` may list the allowed responses (a trie of
continuations). The MDP keeps all ``A`` actions in every state, so the model stays
one rectangular array: a token the grammar forbids ends the episode where it
stands (the observation does not change) with reward ``illegal_reward``. A
language-model policy masks such tokens with ``-inf`` logits
(:meth:`tabular.rlhf.lm.NGramLM.policy`), so it never produces them, and a reference
policy that gives them probability 0 keeps them out of the KL-regularised optimum.

States are numbered breadth-first, prompt roots first, so a prefix always has a
smaller id than its continuations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_index, check_number, check_positive_int, check_size
from tabular.rlhf.lm import EOS, detokenize, tokenize

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv

RewardSpec = Callable[[str, str], float] | Mapping


class TokenMDP(ModelEnv):
    """Generate a response token by token; the reward is paid on the last token.

    ## Description
    A state is a prompt plus the response tokens so far, an action the next token.
    Attributes: ``state_prompt`` (int64 ``[S]``, the prompt number of each state),
    ``state_response`` (the response token ids of each state, a tuple per state),
    ``terminal`` (bool ``[S]``, the finished responses), ``legal`` (bool ``[S, A]``,
    the tokens the grammar allows in each unfinished state).

    ## Action Space
    ``Discrete(len(vocab))``, every token in every state (``vocab``, ``token_id``,
    ``eos_id``: the tokens, their ids, the id of ``eos``).

    ## Observation Space
    ``Discrete(n_states)``, ``n_states`` the size of the prefix tree, numbered
    breadth-first, prompt roots first (53 states with the defaults). The info dict
    adds ``prompt``, ``response`` (decoded), ``tokens`` and the ``legal`` mask.

    ## Starting State
    A prompt with the empty response, the prompt drawn from ``prompt_probs``.

    ## Rewards
    ``reward(prompt, response)`` on the last token, ``illegal_reward`` for a token
    the grammar forbids, 0 otherwise.

    ## Episode End
    Termination: the ``eos`` token, a response of ``max_len`` tokens (``terminated``:
    the length is part of the state), or a forbidden token (the observation does not
    change). Truncation: ``tabzoo/TokenMDP-v0`` (and ``tabzoo/CapitalOfFrance-v0``)
    are registered with ``max_episode_steps=1000``.

    ## Arguments
    * ``prompts``: the prompts (strings, or one string); default ``("Say hello.",)``.
    * ``reward``: ``reward(prompt, response) -> float``, or a mapping from ``(prompt,
      response)`` or ``response`` strings to rewards (missing responses earn
      ``default_reward``). Default ``None``: ``{"hello": 1.0}``, the task "answer
      *Say hello.* with *hello*".
    * ``vocab``: the token strings (actions). Default ``None``: every token of the
      prompts and the grammar, sorted; ``eos`` is appended if absent.
    * ``max_len``: the most tokens a response may have (``eos`` counts); default 3, at
      most ``max_states``.
    * ``prompt_probs``: the start distribution over the prompts; default uniform.
    * ``grammar``: ``None`` (default: every token allowed everywhere), a list of
      allowed responses for every prompt, or a mapping ``prompt -> list of responses``.
    * ``eos``: the end-of-sequence token; default ``tabular.rlhf.lm.EOS`` (``"<eos>"``).
    * ``illegal_reward``: paid when a forbidden token ends the episode; default -1.
    * ``default_reward``: the reward of a response a mapping ``reward`` does not list;
      default 0.
    * ``max_states``: the largest prefix tree the env will enumerate (default
      100,000; at most ``MAX_OUTCOME_SLOTS``); a bigger tree is refused, or one of more
      than ``MAX_OUTCOME_SLOTS`` outcome slots (states x tokens), counted level by level
      (in closed form without a grammar), before anything of the model's size is
      allocated. The tree is built
      with arrays, a level at a time (10^5 states in about a second).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/TokenMDP-v0``; the
      ``tabular/TokenMDP-v0`` id of earlier releases now raises an error naming the
      new id).
    """

    def __init__(self, prompts: Sequence[str] | str = ("Say hello.",),
                 reward: RewardSpec | None = None, *, vocab: Sequence[str] | None = None,
                 max_len: int = 3, prompt_probs: Sequence[float] | None = None,
                 grammar: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
                 eos: str = EOS, illegal_reward: float = -1.0, default_reward: float = 0.0,
                 max_states: int = 100_000, render_mode: str | None = None) -> None:
        if isinstance(prompts, str):
            prompts = (prompts,)
        self.prompts = _strings("prompts", prompts)
        if not self.prompts or len(set(self.prompts)) != len(self.prompts):
            raise ValueError(f"prompts must list one or more distinct prompts, got {prompts!r}")
        given = reward
        if reward is None:
            reward = {"hello": 1.0}
        self.max_states = check_positive_int("max_states", max_states, high=MAX_OUTCOME_SLOTS)
        # a longer response than max_states tokens makes a bigger tree (A >= 2) or none
        self.max_len = check_positive_int("max_len", max_len, high=self.max_states)
        if not (isinstance(eos, str) and eos):
            raise ValueError(f"eos must be a non-empty token string, got {eos!r}")
        self.eos = eos
        self.illegal_reward = _reward_value("illegal_reward", illegal_reward)
        self.default_reward = _reward_value("default_reward", default_reward)

        allowed = _grammar_per_prompt(grammar, self.prompts)
        if vocab is None:
            words = {t for p in self.prompts for t in tokenize(p)}
            if allowed is not None:
                words |= {t for rs in allowed for r in rs for t in tokenize(r)}
            words.discard(eos)
            vocab = sorted(words)
        vocab = _strings("vocab", vocab)
        for i, tok in enumerate(vocab):
            if tok != eos and tokenize(tok) != [tok]:  # it could never be read from text
                raise ValueError(f"vocab[{i}] = {tok!r} is not one token: text reads it as "
                                 f"{tokenize(tok)} (a token is a word or a punctuation mark)")
        self.vocab = tuple(vocab) if eos in vocab else (*vocab, eos)
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError("vocab lists a token twice")
        self.token_id = {t: i for i, t in enumerate(self.vocab)}
        self.eos_id = self.token_id[eos]
        self.prompt_tokens = tuple(self.encode(p, f"prompt {p!r}") for p in self.prompts)
        self._grammar = None if allowed is None else [
            [self.encode(r, f"grammar response {r!r}") + (self.eos_id,) for r in rs]
            for rs in allowed]
        self._reward = _reward_function(reward, self.default_reward)

        raw = np.asarray(np.full(len(self.prompts), 1.0 / len(self.prompts))
                         if prompt_probs is None else prompt_probs)
        if raw.dtype.kind not in "iuf":  # bools, text and complex refused, not coerced
            raise ValueError(f"prompt_probs must hold numbers, got {raw.dtype} {prompt_probs!r}")
        self.prompt_probs = raw.astype(np.float64)
        if not (self.prompt_probs.shape == (len(self.prompts),)
                and np.all(self.prompt_probs >= 0.0)
                and abs(self.prompt_probs.sum() - 1.0) <= 1e-9):  # NaN fails each test
            raise ValueError(f"prompt_probs must be a distribution over the {len(self.prompts)} "
                             f"prompts, got {prompt_probs!r}")

        super().__init__(self._enumerate(), render_mode)
        if isinstance(given, Mapping):
            self._check_reward_keys(given)

    # ----------------------------------------------------------------- text
    def encode(self, text: str, what: str = "text") -> tuple[int, ...]:
        """Token ids of ``text``; an unknown token is an error naming it and ``what``
        (how the error names the text; default ``"text"``)."""
        if not isinstance(text, str):
            raise ValueError(f"{what} must be a string, got {type(text).__name__}")
        ids = []
        for tok in tokenize(text):
            if tok not in self.token_id:
                raise ValueError(f"{what}: token {tok!r} is not in the vocabulary")
            ids.append(self.token_id[tok])
        return tuple(ids)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids (the end-of-sequence token is dropped)."""
        ids = [check_index("token id", i, len(self.vocab)) for i in ids]
        return detokenize([self.vocab[i] for i in ids if i != self.eos_id])

    # ----------------------------------------------------------- the tree
    def legal_tokens(self, prompt: int, response: tuple[int, ...]) -> tuple[int, ...]:
        """Token ids the grammar allows after ``response`` (token ids) to prompt number
        ``prompt``."""
        return tuple(int(a) for a in np.flatnonzero(self.legal[self.state_of(prompt,
                                                                              response)]))

    def _levels(self) -> list[np.ndarray]:
        """The prefix tree level by level, without a loop per state: ``levels[d]`` holds the
        keys ``parent * B + token + 1`` (``B = A + 1``; the prompt number at depth 0) of
        its prefixes of ``d`` tokens, sorted, so that numbering the levels in order is
        breadth-first with each parent's children in token order. The size is checked
        against ``max_states`` before anything of size ``S x A`` is allocated."""
        A, L, P = len(self.vocab), self.max_len, len(self.prompts)
        B = A + 1
        levels = [np.arange(P, dtype=np.int64)]
        if self._grammar is None:  # every token everywhere: the size level by level first
            total, growing = P, P  # the prefixes so far, and those not ended by eos
            for _ in range(L):
                total, growing = total + growing * A, growing * (A - 1)
                if total > self.max_states or growing == 0:
                    break
            self._refuse_above(total)
            for d in range(L):  # every prefix not ended by eos grows by every token
                if levels[-1].size == 0:  # every prefix has ended: no deeper level
                    break
                ended = (levels[-1] % B - 1 == self.eos_id) & (d > 0)
                levels.append((np.flatnonzero(~ended)[:, None] * B + np.arange(1, B)).ravel())
            return levels
        # every grammar response, its tokens padded with -1, and the prompt it answers
        seqs = [(p, seq) for p, rs in enumerate(self._grammar) for seq in rs]
        owner = np.array([p for p, _ in seqs], dtype=np.int64)
        L = min(L, max(len(seq) for _, seq in seqs))  # no level past the longest response
        tokens = np.full((len(seqs), L), -1, dtype=np.int64)
        for i, (_, seq) in enumerate(seqs):
            seq = seq[:L]
            tokens[i, : len(seq)] = seq
        node = owner  # each response's prefix node in the current level
        total = P
        for d in range(L):
            longer = tokens[:, d] >= 0
            keys = node[longer] * B + tokens[longer, d] + 1
            level, inverse = np.unique(keys, return_inverse=True)
            total += len(level)
            self._refuse_above(total)
            node = np.full(len(seqs), -1, dtype=np.int64)
            node[longer] = inverse
            levels.append(level)
        return levels

    def _refuse_above(self, total: int) -> None:
        """Refuse a tree of at least ``total`` states if that is more than ``max_states``, or
        more than ``MAX_OUTCOME_SLOTS`` outcome slots (``S x A``), before building it."""
        if total > self.max_states:
            raise ValueError(f"the prefix tree has at least {total:,} states, more than "
                             f"max_states={self.max_states}; shorten max_len (={self.max_len}), "
                             f"shrink the vocabulary (={len(self.vocab)} tokens), add a "
                             "grammar, or raise max_states")
        check_size(f"the prefix tree ({total:,} states x {len(self.vocab)} tokens)",
                   total * len(self.vocab), MAX_OUTCOME_SLOTS, OUTCOME_BYTES)

    def _enumerate(self) -> TabularMDP:
        """Number the prefix tree breadth-first and build its exact model (``K = 1``), with
        arrays: one pass per level, one Python call per finished response (its reward)."""
        levels = self._levels()
        A, B, P = len(self.vocab), len(self.vocab) + 1, len(self.prompts)
        offsets = np.cumsum([0] + [len(level) for level in levels])
        S = int(offsets[-1])
        self.n_states = S
        parent = np.arange(S, dtype=np.int64)
        token = np.full(S, -1, dtype=np.int64)
        depth = np.zeros(S, dtype=np.int64)
        for d in range(1, len(levels)):
            ids = np.arange(offsets[d], offsets[d + 1])
            parent[ids] = levels[d] // B + offsets[d - 1]
            token[ids] = levels[d] % B - 1
            depth[ids] = d
        prompt = np.arange(S, dtype=np.int64)
        for d in range(1, len(levels)):
            ids = np.arange(offsets[d], offsets[d + 1])
            prompt[ids] = prompt[parent[ids]]
        self.state_prompt = prompt
        self._parent, self._token = parent, token
        self.terminal = (token == self.eos_id) | (depth >= self.max_len)
        texts = self._texts = _texts(self.prompts, self.vocab, parent, token, self.eos_id)
        child = np.arange(P, S)
        s, a = parent[child], token[child]
        self.legal = np.zeros((S, A), dtype=bool)
        self.legal[s, a] = True
        next_state = np.repeat(np.arange(S)[:, None], A, axis=1)
        next_state[s, a] = child
        done = np.ones((S, A), dtype=bool)
        done[s, a] = self.terminal[child]
        reward = np.where(self.terminal[:, None], 0.0, np.full((S, A), self.illegal_reward))
        reward[s, a] = 0.0
        ends = child[self.terminal[child]]
        reward[parent[ends], token[ends]] = [
            self._score(int(prompt[c]), texts[c]) for c in ends]
        start = np.zeros(S)
        start[:P] = self.prompt_probs
        labels = tuple(f"{self.prompts[p]} | {t}" + (" <eos>" if tok == self.eos_id else "")
                       for p, t, tok in zip(prompt.tolist(), texts, token.tolist(),
                                            strict=True))
        return TabularMDP(next_state[:, :, None], np.ones((S, A, 1)), reward[:, :, None],
                          done[:, :, None], start, state_labels=labels,
                          action_names=self.vocab)

    def _check_reward_keys(self, reward: Mapping) -> None:
        """Refuse a key of the mapping ``reward`` that names no response of the tree (a
        text the vocabulary, ``max_len`` or the grammar cannot produce, or spelt otherwise
        than :func:`~tabular.rlhf.lm.detokenize` writes it): it would never be paid."""
        ends = np.flatnonzero(self.terminal)
        pairs = {(self.prompts[self.state_prompt[c]], self._texts[c]) for c in ends}
        texts = {y for _, y in pairs}
        for key in reward:
            if not (key in texts if isinstance(key, str) else key in pairs):
                raise ValueError(f"reward lists {key!r}, which is not a response (or a "
                                 "(prompt, response) pair) of this token MDP: the vocabulary, "
                                 "max_len or grammar cannot produce it, so it would never be "
                                 "paid")

    def response_ids(self, s: int) -> tuple[int, ...]:
        """The response token ids of state ``s`` (its path from the prompt)."""
        s = check_index("s", s, self.n_states)
        ids = []
        while self._token[s] >= 0:
            ids.append(int(self._token[s]))
            s = self._parent[s]
        return tuple(reversed(ids))

    @property
    def state_response(self) -> tuple[tuple[int, ...], ...]:
        """The response token ids of each state, a tuple per state."""
        return tuple(self.response_ids(s) for s in range(self.n_states))

    def reward(self, prompt: int, response: tuple[int, ...]) -> float:
        """``r(x, y)`` of a finished ``response`` (token ids) to prompt number ``prompt``,
        as the reward function says (NaN and ``+inf`` refused)."""
        return self._score(self._prompt_number(prompt), self.decode(response))

    def _score(self, prompt: int, text: str) -> float:
        return _reward_value(f"the reward of prompt {self.prompts[prompt]!r}, response "
                             f"{text!r}", self._reward(self.prompts[prompt], text))

    def state_of(self, prompt: int | str, response: str | Sequence[int] = ()) -> int:
        """The state id of ``prompt`` (its number or text) and a ``response`` prefix (text
        or token ids; default: the empty response, the prompt's root)."""
        p = self._prompt_number(prompt)
        ids = self.encode(response) if isinstance(response, str) else tuple(
            check_index("token id", tok, len(self.vocab)) for tok in response)
        s = p
        next_state = self.to_mdp().next_state
        for tok in ids:
            if self.terminal[s] or not self.legal[s, tok]:
                raise KeyError(f"response {self.decode(ids)!r} to prompt {self.prompts[p]!r} "
                               "is not a state of this token MDP (grammar or max_len)")
            s = int(next_state[s, tok, 0])
        return s

    def _prompt_number(self, prompt: int | str) -> int:
        """The number of ``prompt`` (its number or its text); a ``ValueError`` naming it
        otherwise."""
        if isinstance(prompt, str):
            if prompt not in self.prompts:
                raise ValueError(f"prompt {prompt!r} is not one of the {len(self.prompts)} "
                                 "prompts of this token MDP")
            return self.prompts.index(prompt)
        return check_index("prompt", prompt, len(self.prompts))

    def final_state(self, prompt: int | str, response: str) -> int:
        """The terminal state of a complete ``response`` (text) to ``prompt`` (number or
        text): ``eos`` is appended if it fits in ``max_len``."""
        ids = self.encode(response)
        if len(ids) < self.max_len:
            ids = ids + (self.eos_id,)
        return self.state_of(prompt, ids)

    def context(self, s: int) -> tuple[int, ...]:
        """The whole token sequence of state ``s``: prompt tokens, then response tokens."""
        return self.prompt_tokens[self.state_prompt[check_index("s", s, self.n_states)]] \
            + self.response_ids(s)

    def text(self, s: int) -> str:
        """The decoded response of state ``s`` (without ``eos``)."""
        return self._texts[check_index("s", s, self.n_states)]

    @property
    def state_labels(self) -> Sequence[str]:
        """``"prompt | response"`` of each state (the model's state labels)."""
        labels = self.to_mdp().state_labels
        assert labels is not None  # the token MDP's model names every state
        return labels

    # ------------------------------------------------------------ gymnasium
    def _info(self, prob: float) -> dict:
        s = self.s
        assert s is not None  # reset() drew one before any info
        return {"prob": prob, "prompt": self.prompts[self.state_prompt[s]],
                "response": self.text(s),
                "tokens": tuple(self.vocab[i] for i in self.response_ids(s)),
                "legal": self.legal[s].copy()}

    def render_text(self) -> str:
        """The conversation so far: ``User: <prompt>`` and ``Assistant: <response>``."""
        s = self.s
        if s is None:
            return "(not reset)\n"
        end = " <eos>" if self._token[s] == self.eos_id else ""
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
        _strings(f"grammar[{p!r}]" if isinstance(grammar, Mapping) else "grammar", rs)
    return per_prompt


def _strings(name: str, values) -> tuple[str, ...]:
    """``values`` as a tuple of strings; a ``ValueError`` naming ``name`` and the first
    one that is not a string (one string is not a list of them)."""
    if isinstance(values, str) or not isinstance(values, Sequence | Iterable):
        raise ValueError(f"{name} must be a list of strings, got {values!r}")
    values = tuple(values)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise ValueError(f"{name}[{i}] must be a string, got {value!r}")
    return values


def _texts(prompts, vocab, parent, token, eos_id) -> list[str]:
    """The decoded response of every state, each its parent's text plus its token (the
    rule of :func:`tabular.rlhf.lm.detokenize`; ``eos`` adds nothing)."""
    texts = [""] * len(parent)
    for c in range(len(prompts), len(parent)):  # parents come first
        t, tok = texts[parent[c]], token[c]
        texts[c] = t if tok == eos_id else detokenize([t, vocab[tok]])
    return texts


def _reward_value(name: str, value) -> float:
    """A reward: a number, finite or ``-inf`` (NaN, ``+inf`` and non-numbers refused)."""
    value = check_number(name, value)
    if not value < np.inf:  # NaN and +inf
        raise ValueError(f"{name} must be a number below +inf (NaN refused), got {value}")
    return value


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
