"""A small n-gram language model that is also a policy of the token MDP.

The model is a :class:`~tabular.SoftmaxPolicy` whose rows are n-gram contexts:
the next-token distribution after a prefix is ``softmax(logits[row(context)])``
with ``context`` = the last ``n - 1`` tokens of the prompt-plus-response so far
(``n=None``: the whole prefix, the exact per-prefix table). The same rows drive
generation here, maximum-likelihood training (pre-training by next-token
prediction, Radford et al., 2018; supervised fine-tuning on demonstrations with
the loss on the response tokens only, Ouyang et al., 2022), and, through
:meth:`NGramLM.policy`, the policy-gradient learners of :mod:`tabular.pg.learners` on the
token MDP.

Training is stochastic gradient descent on the token cross-entropy in one Numba
kernel, ``theta_row += alpha_t * m_t * (onehot(y_t) - pi(.|context))``: the
policy-gradient rule :func:`~tabular.rules.policy_gradient.policy_gradient_step`
with the loss mask ``m_t`` (0 on prompt tokens in SFT) times a linearly decaying
step ``alpha_t`` as its weight. Examples are visited in an order shuffled by a
:func:`tabular._numba.rng.seed_states` stream, so the same seed gives the same
model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import categorical, seed_states, shuffle
from tabular.checks import MAX_COUNT, check_positive, check_positive_int
from tabular.model.policy import SoftmaxPolicy
from tabular.pg.arguments import MAX_POLICY_STEP
from tabular.results import short_repr
from tabular.rules.policy_gradient import log_softmax, policy_gradient_step, softmax
from tabular.types import TokenEnv

EOS = "<eos>"
BOS = -1  #: the padding before the first token of a document; never a vocabulary id

_TOKEN = re.compile(r"<[a-z]+>|[A-Za-z0-9']+|[^\sA-Za-z0-9']")
_NO_SPACE_BEFORE = {".", ",", "?", "!", ":", ";"}


def tokenize(text: str) -> list[str]:
    """Words and punctuation marks: ``"Paris."`` -> ``["Paris", "."]``."""
    return _TOKEN.findall(text)


def detokenize(tokens: Sequence[str]) -> str:
    """The inverse of :func:`~tabular.rlhf.lm.tokenize` for ordinary text (no space before
    punctuation)."""
    out = ""
    for tok in tokens:
        if out and tok not in _NO_SPACE_BEFORE:
            out += " "
        out += tok
    return out


def context_of(prefix: Sequence[int], n: int | None) -> tuple[int, ...]:
    """The n-gram context of the next token: the last ``n - 1`` tokens of ``prefix``.

    Positions before the start are padded with :data:`BOS`; ``n=None`` keeps the
    whole prefix (so every prefix has its own row).
    """
    if n is None:
        return (BOS, *prefix)
    if n == 1:
        return ()
    padded = (BOS,) * (n - 1) + tuple(prefix)
    return padded[len(padded) - (n - 1):]


@dataclass
class NGramLM:
    """``P(y_t | y_<t) = softmax(logits[rows[context_of(y_<t, n)]])[y_t]``.

    ``rows`` maps each context seen so far to its row of ``logits``; row 0 serves
    every context never seen in training (it starts uniform).
    """

    vocab: tuple[str, ...]
    n: int | None
    logits: np.ndarray
    rows: dict = field(repr=False)
    eos: str = EOS

    @classmethod
    def create(cls, vocab: Sequence[str], n: int | None, eos: str = EOS) -> NGramLM:
        """An untrained (uniform) model over ``vocab`` (``eos`` appended if absent)."""
        if n is not None:
            check_positive_int("n", n)
        if isinstance(vocab, str) or not isinstance(vocab, Iterable):
            raise ValueError(f"vocab must be a list of token strings, got {vocab!r:.60}")
        vocab = tuple(vocab)
        for i, tok in enumerate(vocab):
            if not isinstance(tok, str) or (tok != eos and tokenize(tok) != [tok]):
                raise ValueError(f"vocab[{i}] = {tok!r} is not one token (a word or a "
                                 "punctuation mark)")
        vocab = vocab if eos in vocab else (*vocab, eos)
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocab lists a token twice")
        return cls(vocab, n, np.zeros((1, len(vocab))), {}, eos)

    @property
    def token_id(self) -> dict:
        """``{token: id}``: each token's index in ``vocab``."""
        return {t: i for i, t in enumerate(self.vocab)}

    @property
    def eos_id(self) -> int:
        """The id of the end-of-sequence token."""
        return self.vocab.index(self.eos)

    def encode(self, text: str) -> tuple[int, ...]:
        """The token ids of ``text`` (:func:`~tabular.rlhf.lm.tokenize`); a token outside the
        vocabulary is an error."""
        ids = self.token_id
        missing = [t for t in tokenize(text) if t not in ids]
        if missing:
            raise ValueError(f"token {missing[0]!r} of {text!r} is not in the vocabulary")
        return tuple(ids[t] for t in tokenize(text))

    def row(self, prefix: Sequence[int]) -> int:
        """The row of logits the next token after ``prefix`` reads."""
        return self.rows.get(context_of(prefix, self.n), 0)

    def with_logits(self, logits: np.ndarray) -> NGramLM:
        """The same contexts with new logits (for instance trained by a learner)."""
        logits = np.array(logits, dtype=np.float64)
        if logits.shape != self.logits.shape:
            raise ValueError(f"logits must have shape {self.logits.shape}, got {logits.shape}")
        return NGramLM(self.vocab, self.n, logits, dict(self.rows), self.eos)

    def _with_rows_for(self, sequences: Sequence[Sequence[int]]) -> NGramLM:
        """A copy with a (uniform) row for every context in ``sequences``."""
        rows = dict(self.rows)
        for seq in sequences:
            for t in range(len(seq)):
                rows.setdefault(context_of(seq[:t], self.n), len(rows) + 1)
        logits = np.zeros((len(rows) + 1, len(self.vocab)))
        logits[: self.logits.shape[0]] = self.logits
        return NGramLM(self.vocab, self.n, logits, rows, self.eos)

    # ------------------------------------------------------------ inference
    def next_token_probs(self, prefix: Sequence[int]) -> np.ndarray:
        """``[V]``: ``P(y_t | prefix)``, the softmax of the row the context of ``prefix``
        reads."""
        out = np.empty(len(self.vocab))
        softmax(self.logits[self.row(prefix)], out)
        return out

    def log_prob(self, prompt: str, response: str) -> float:
        """``log P(y | x) = sum_t log P(y_t | x, y_<t)`` over the response and ``eos``
        (the chain rule of probability)."""
        x = self.encode(prompt)
        y = self.encode(response) + (self.eos_id,)
        total, out = 0.0, np.empty(len(self.vocab))
        for t, tok in enumerate(y):
            log_softmax(self.logits[self.row(x + y[:t])], out)
            total += out[tok]
        return float(total)

    def generate(self, prompt: str, *, max_len: int = 20, temperature: float = 1.0,
                 greedy: bool = False, seed: int | None = 0) -> str:
        """A response: the most likely token at each step (``greedy``) or a sample from
        ``softmax(logits / temperature)``, stopping at ``eos`` or after ``max_len`` tokens.

        ``max_len`` default 20; ``temperature`` (> 0) default 1.0; ``greedy`` default
        False; ``seed`` (of the sampling stream, ``None``: fresh entropy) default 0.
        """
        check_positive_int("max_len", max_len)
        temperature = check_positive("temperature", temperature)
        rng = seed_states(seed, 1)[0]
        x = self.encode(prompt)
        y: tuple[int, ...] = ()
        probs = np.empty(len(self.vocab))
        while len(y) < max_len and (not y or y[-1] != self.eos_id):
            logits = self.logits[self.row(x + y)]
            if greedy:
                tok = int(np.argmax(logits))
            else:
                softmax(logits / temperature, probs)
                tok = int(categorical(rng, probs))
            y = y + (tok,)
        return detokenize([self.vocab[t] for t in y if t != self.eos_id])

    def policy(self, mdp: TokenEnv, *, per_state: bool = False) -> SoftmaxPolicy:
        """This model as a policy of a token MDP ``mdp`` (an ``envs.TokenMDP``).

        State ``s`` reads the row of its context (prompt tokens + response so far).
        Tokens the grammar forbids are masked with ``-inf``: in a shared n-gram row,
        those forbidden in every state that reads the row. ``per_state=True`` gives
        every state its own copy of its row (the exact per-prefix table, which can
        represent any distribution over responses), masked state by state.
        Finished states (no action taken) keep their row unmasked.
        """
        if tuple(mdp.vocab) != self.vocab:
            raise ValueError("the model's vocabulary differs from the token MDP's")
        S = mdp.n_states
        own_row = np.array([self.row(mdp.context(s)) for s in range(S)], dtype=np.int64)
        if per_state:
            logits = self.logits[own_row].copy()
            acting = ~mdp.terminal
            logits[acting] = np.where(mdp.legal[acting], logits[acting], -np.inf)
            return SoftmaxPolicy(logits, np.arange(S))
        allowed = np.zeros(self.logits.shape, dtype=bool)
        used = np.zeros(self.logits.shape[0], dtype=bool)
        for s in np.flatnonzero(~mdp.terminal):
            allowed[own_row[s]] |= mdp.legal[s]
            used[own_row[s]] = True
        logits = np.where(allowed | ~used[:, None], self.logits, -np.inf)
        return SoftmaxPolicy(logits, own_row)


# ----------------------------------------------------------------- training
@njit(cache=True)
def cross_entropy(log_probs, target):
    """``-log pi(y_t | context)``: the cross-entropy loss of one token, whose sum over a
    text is its negative log-likelihood."""
    return -log_probs[target]


@njit(cache=True)
def linear_decay(alpha, step, total_steps):
    """``alpha * (1 - step / total_steps)``: the step size falls linearly to 0."""
    return alpha * (1.0 - step / total_steps)


class Tokens(NamedTuple):
    """The training tokens, flattened over the examples: the row of logits each token
    reads (``rows``), the token (``targets``) and its loss weight (``mask``: 0 on prompt
    tokens in SFT), each ``[N]``."""

    rows: np.ndarray
    targets: np.ndarray
    mask: np.ndarray


class MaximumLikelihoodParams(NamedTuple):
    """Passes over the data (``epochs``) and the initial step size ``alpha``."""

    epochs: int
    alpha: float


@njit(cache=True)
def _maximum_likelihood_sgd(logits, data, p, rng):
    """SGD on ``sum_t m_t * -log pi(y_t | row_t)``; returns the mean masked loss per epoch.

    A token with ``m_t = 0`` (a prompt token in SFT) is never visited: its row gets no
    gradient from it.
    """
    A = logits.shape[1]
    active = np.flatnonzero(data.mask > 0.0)
    N = active.shape[0]
    probs, log_probs = np.empty(A), np.empty(A)
    history = np.zeros(p.epochs)
    order = active.copy()
    total_steps = p.epochs * N
    step = 0
    for epoch in range(p.epochs):
        shuffle(rng, order)
        loss = 0.0
        for i in range(N):
            e = order[i]
            theta = logits[data.rows[e]]
            log_softmax(theta, log_probs)
            loss += data.mask[e] * cross_entropy(log_probs, data.targets[e])
            # descending the loss is ascending log pi(y_t): the policy-gradient step
            policy_gradient_step(theta, data.targets[e],
                                 linear_decay(p.alpha, step, total_steps) * data.mask[e], probs)
            step += 1
        history[epoch] = loss / max(N, 1)
    return history


@dataclass(frozen=True, eq=False, repr=False)
class TrainResult:
    """What :func:`pretrain` and :func:`sft` return.

    Attributes
    ----------
    lm : the trained :class:`NGramLM` (a copy; the model passed in is not modified).
    loss : float64 ``[epochs]``, the mean masked cross-entropy (nats per trained token)
        of each epoch, accumulated while the epoch's steps are taken.
    """

    __repr__ = short_repr

    lm: NGramLM
    loss: np.ndarray


def check_lm(lm: object) -> NGramLM:
    """``lm`` if it is an :class:`NGramLM`; a ``TypeError`` naming it otherwise."""
    if not isinstance(lm, NGramLM):
        raise TypeError(f"lm must be a tabular.rlhf.NGramLM (NGramLM.create(vocab, n)), got "
                        f"{type(lm).__name__}")
    return lm


def _train(lm, sequences, masks, epochs, alpha, seed) -> TrainResult:
    epochs = check_positive_int("epochs", epochs, high=MAX_COUNT)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    lm = lm._with_rows_for(sequences)
    rows = np.array([lm.row(seq[:t]) for seq in sequences for t in range(len(seq))],
                    dtype=np.int64)
    targets = np.array([tok for seq in sequences for tok in seq], dtype=np.int64)
    mask = np.concatenate([np.asarray(m, dtype=np.float64) for m in masks])
    masked = (mask > 0.0) & ~np.isfinite(lm.logits[rows, targets])
    if masked.any():  # its loss would be infinite: -log 0
        e = int(np.argmax(masked))
        raise ValueError(f"training token {lm.vocab[targets[e]]!r} has a -inf logit (masked) in "
                         "its context; unmask it before maximum-likelihood training")
    logits = lm.logits.copy()
    history = _maximum_likelihood_sgd(logits, Tokens(rows, targets, mask),
                                      MaximumLikelihoodParams(epochs, alpha),
                                      seed_states(seed, 1)[0])
    return TrainResult(lm.with_logits(logits), history)


def pretrain(lm: NGramLM, corpus: Sequence[str], *, epochs: int = 60, alpha: float = 0.5,
             seed: int | None = 0) -> TrainResult:
    """Pre-training: maximum likelihood of a corpus by next-token prediction on every
    token (Radford et al., 2018), one document per string, each ended by ``eos``.

    Parameters
    ----------
    lm : the model to start from (rows are added for the corpus's new contexts).
    corpus : the documents (strings of vocabulary tokens).
    epochs : passes over the corpus, default 60.
    alpha : the initial step size, decaying linearly to 0 (> 0), default 0.5.
    seed : seed of the shuffling stream (``None``: fresh entropy), default 0.

    Returns a :class:`~tabular.rlhf.lm.TrainResult`.
    """
    lm = check_lm(lm)
    if isinstance(corpus, str) or not isinstance(corpus, Iterable):
        raise ValueError(f"corpus must be a list of documents (strings), got {corpus!r:.60}: "
                         "one string would be read as a list of one-character documents")
    docs = []
    for i, doc in enumerate(corpus):
        if not isinstance(doc, str):
            raise ValueError(f"corpus[{i}] must be a string (a document), got {doc!r:.60}")
        docs.append(lm.encode(doc) + (lm.eos_id,))
    if not docs:
        raise ValueError("corpus is empty")
    return _train(lm, docs, [np.ones(len(d)) for d in docs], epochs, alpha, seed)


def sft_examples(lm: NGramLM, pairs) -> tuple[list[tuple[int, ...]], list[np.ndarray]]:
    """Token sequences ``prompt + response + eos`` and their loss masks (0 on the prompt).

    ``pairs``: ``(prompt, response)`` or ``(count, prompt, response)`` tuples.
    """
    seqs, masks = [], []
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) not in (2, 3):
            raise ValueError(f"SFT pair {i} is {pair!r}, not (prompt, response) or "
                             "(count, prompt, response)")
        count, prompt, response = pair if len(pair) == 3 else (1, *pair)
        count = check_positive_int(f"the count of SFT pair {i}", count)  # 2.5 copies: no
        x, y = lm.encode(prompt), lm.encode(response) + (lm.eos_id,)
        for _ in range(count):
            seqs.append(x + y)
            masks.append(np.r_[np.zeros(len(x)), np.ones(len(y))])
    if not seqs:
        raise ValueError("no SFT pairs given")
    return seqs, masks


def sft(lm: NGramLM, pairs: Iterable[tuple[Any, ...]], *, epochs: int = 60, alpha: float = 0.5,
        seed: int | None = 0) -> TrainResult:
    """Supervised fine-tuning: maximum likelihood of the demonstrated responses given
    their prompts, with the loss on the response tokens only (the loss mask ``m_t`` is
    0 on prompt tokens; Ouyang et al., 2022, section 3.5).

    Parameters
    ----------
    lm : the model to start from (usually pre-trained).
    pairs : ``(prompt, response)`` or ``(count, prompt, response)`` demonstrations.
    epochs : passes over the demonstrations, default 60.
    alpha : the initial step size, decaying linearly to 0 (> 0), default 0.5.
    seed : seed of the shuffling stream (``None``: fresh entropy), default 0.

    Returns a :class:`~tabular.rlhf.lm.TrainResult`.
    """
    seqs, masks = sft_examples(check_lm(lm), pairs)
    return _train(lm, seqs, masks, epochs, alpha, seed)
