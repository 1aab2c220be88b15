"""The n-gram language model: maximum-likelihood training, the loss mask, generation,
and exact sequence probabilities through the token MDP."""

from collections import Counter

import numpy as np
import pytest

from tabular.envs.token import TokenMDP
from tabular.rlhf import ending_probabilities, response_distribution
from tabular.rlhf.lm import BOS, NGramLM, context_of, pretrain, sft, sft_examples, tokenize

CORPUS = ["a b a", "a b b", "b a", "a a b a", "b b b", "a b"]


def empirical_next_token(corpus, n, vocab):
    """Counts of (context, next token), the closed-form maximum-likelihood n-gram model."""
    counts: dict = {}
    for doc in corpus:
        ids = [vocab.index(t) for t in tokenize(doc)] + [vocab.index("<eos>")]
        for t, tok in enumerate(ids):
            counts.setdefault(context_of(ids[:t], n), Counter())[tok] += 1
    return counts


@pytest.mark.parametrize("n", [1, 2, 3])
def test_pretraining_converges_to_the_count_estimate(n):
    lm = NGramLM.create(["a", "b"], n)
    res = pretrain(lm, CORPUS, epochs=300, alpha=0.5, seed=1)
    vocab = list(res.lm.vocab)
    for ctx, counter in empirical_next_token(CORPUS, n, vocab).items():
        total = sum(counter.values())
        mle = np.array([counter[i] / total for i in range(len(vocab))])
        probs = np.exp(res.lm.logits[res.lm.rows[ctx]])
        probs /= probs.sum()
        # tokens seen in a context converge geometrically; unseen ones decay like
        # 1 / (alpha * count * steps), below 0.02 after 300 epochs of linear decay
        assert np.abs(probs - mle).max() < 0.02, ctx
    assert res.loss[-1] < res.loss[0]


def test_training_is_reproducible_and_seeded():
    lm = NGramLM.create(["a", "b"], 2)
    a = pretrain(lm, CORPUS, epochs=5, seed=7).lm.logits
    b = pretrain(lm, CORPUS, epochs=5, seed=7).lm.logits
    c = pretrain(lm, CORPUS, epochs=5, seed=8).lm.logits
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_sft_puts_no_gradient_on_prompt_tokens():
    """Rows and logits that only prompt tokens would train stay bit-identical; without the
    mask (training on the whole sequence) they move."""
    base = pretrain(NGramLM.create(["Q", "x", "y", "A"], 2), ["Q x y", "A"], epochs=20).lm
    pairs = [(3, "Q x", "A"), (1, "Q x", "y A")]
    seqs, masks = sft_examples(base, pairs)
    assert [m.tolist() for m in masks[:1]] == [[0, 0, 1, 1]]  # prompt Q x | response A <eos>
    tuned = sft(base, pairs, epochs=30).lm
    prompt_only = [base.rows[context_of((), 2)], base.rows[context_of((0,), 2)]]  # ->Q, Q->x
    assert np.array_equal(tuned.logits[prompt_only], base.logits[prompt_only])
    response_row = tuned.rows[context_of((0, 1), 2)]  # x -> A or y
    assert not np.array_equal(tuned.logits[response_row], base.logits[response_row])
    # the same texts with every token in the loss (pre-training on them) move the prompt rows
    moved = pretrain(base, ["Q x A"] * 3 + ["Q x y A"], epochs=30).lm
    assert not np.array_equal(moved.logits[prompt_only], base.logits[prompt_only])
    assert len(seqs) == 4


def test_sft_reaches_the_demonstrations_and_leaves_other_rows_alone():
    base = pretrain(NGramLM.create(["Q", "A", "B"], None), ["Q B", "Q A"], epochs=50).lm
    tuned = sft(base, [(9, "Q", "A"), (1, "Q", "B")], epochs=200).lm
    # with full-prefix contexts, P(A | Q) is the demonstrations' 0.9
    assert tuned.next_token_probs(tuned.encode("Q"))[tuned.token_id["A"]] == pytest.approx(
        0.9, abs=0.01)  # SGD with a linearly decaying step ends within 0.01 of the MLE


def exact_policy_env(lm, max_len):
    env = TokenMDP(["a"], {}, vocab=lm.vocab, max_len=max_len)
    return env, env.to_mdp()


@pytest.mark.parametrize("n", [2, None])
def test_sequence_probabilities_by_enumeration_equal_log_prob(n):
    lm = pretrain(NGramLM.create(["a", "b"], n), CORPUS, epochs=30).lm
    env, mdp = exact_policy_env(lm, 3)
    ends = ending_probabilities(mdp, lm.policy(env))
    assert ends.sum() == pytest.approx(1.0, abs=1e-12)
    for response in ["", "a", "b a", "a a"]:  # response + eos fits within max_len
        s = env.state_of(0, response)
        assert ends[s, env.eos_id] == pytest.approx(np.exp(lm.log_prob("a", response)), rel=1e-12)
    # a response cut at max_len has the probability of its tokens, without eos
    s = env.state_of(0, "a b")
    p = np.prod([lm.next_token_probs(lm.encode(pre))[tok]
                 for pre, tok in [("a", 0), ("a a", 1), ("a a b", 1)]])  # "a b b"
    assert ends[s, env.token_id["b"]] == pytest.approx(p, rel=1e-12)


def test_generation_greedy_temperature_and_sampling_frequencies():
    lm = pretrain(NGramLM.create(["a", "b"], 2), CORPUS, epochs=50).lm
    env, mdp = exact_policy_env(lm, 2)
    ends = ending_probabilities(mdp, lm.policy(env))
    texts = Counter(lm.generate("a", max_len=2, seed=s) for s in range(2000))
    for response in ["", "a", "b"]:
        p = ends[env.state_of(0, response), env.eos_id]
        # 2000 samples: a binomial standard deviation is at most 0.0112; allow 4 of them
        assert abs(texts[response] / 2000 - p) < 0.045, response
    greedy = lm.generate("a", max_len=4, greedy=True)
    ids = lm.encode("a")
    expected = []
    for _ in range(4):
        tok = int(np.argmax(lm.logits[lm.row(ids)]))
        ids += (tok,)
        if tok == lm.eos_id:
            break
        expected.append(lm.vocab[tok])
    assert greedy == " ".join(expected)
    assert lm.generate("a", max_len=4, temperature=1e-3, seed=5) == greedy
    assert lm.generate("a", seed=3) == lm.generate("a", seed=3)


def test_contexts_rows_and_masks():
    assert context_of((4, 5, 6), 3) == (5, 6)
    assert context_of((4,), 3) == (BOS, 4)
    assert context_of((4, 5), None) == (BOS, 4, 5)
    assert context_of((4, 5), 1) == ()
    lm = pretrain(NGramLM.create(["Q", "y", "z"], 2), ["Q y z"], epochs=2).lm
    env = TokenMDP(["Q"], {}, vocab=lm.vocab, max_len=3, grammar=["y", "z y"])
    shared = lm.policy(env)
    exact = lm.policy(env, per_state=True)
    root, after_y = env.state_of(0, ""), env.state_of(0, "y")
    first = shared.probs()[root]
    assert first[env.token_id["Q"]] == 0.0 and first[env.eos_id] == 0.0  # not first tokens
    assert first[env.token_id["y"]] > 0.0 and first[env.token_id["z"]] > 0.0
    assert exact.probs()[after_y].tolist() == [0.0, 0.0, 0.0, 1.0]  # only eos after "y"
    acting = ~env.terminal
    assert np.array_equal(np.isfinite(exact.logits[acting]), env.legal[acting])
    assert len(set(exact.row_of_state.tolist())) == env.n_states


def test_errors_name_the_problem():
    lm = NGramLM.create(["a"], 2)
    with pytest.raises(ValueError, match="'zz'"):
        lm.log_prob("a", "zz")
    with pytest.raises(ValueError, match="temperature"):
        lm.generate("a", temperature=0.0)
    with pytest.raises(ValueError, match="epochs"):
        pretrain(lm, ["a"], epochs=0)
    masked = pretrain(lm, ["a"], epochs=1).lm
    masked.logits[:, 0] = -np.inf
    with pytest.raises(ValueError, match="'a' has a -inf logit"):
        sft(masked, [("a", "a")])
    with pytest.raises(ValueError, match="vocabulary differs"):
        lm.policy(TokenMDP(["b"], {}, vocab=["b"], max_len=1))


def test_shared_ngram_rows_can_pick_tokens_a_state_forbids_and_enumeration_counts_them():
    """After "y" (reply "y z") only z is allowed, after "z y" only eos; a bigram model reads
    the same row (y,) in both states, so its mask allows both and "y <eos>" ends on a
    forbidden token (as do three others). The per-prefix policy never does."""
    lm = pretrain(NGramLM.create(["Q", "y", "z"], 2), ["Q y z", "Q z y", "y"], epochs=20).lm
    env = TokenMDP(["Q"], {}, vocab=lm.vocab, max_len=3, grammar=["y z", "z y"])
    shared = response_distribution(env, lm.policy(env))
    exact = response_distribution(env, lm.policy(env, per_state=True))
    assert sum(shared.values()) == pytest.approx(1.0, abs=1e-12)
    assert shared[("Q", None)] > 0.0 and ("Q", None) not in exact
    assert set(exact) == {("Q", "y z"), ("Q", "z y")}

    # Rows renormalised over the tokens their masks keep: {y, z} after Q, {z, eos} after y,
    # {y, eos} after z. Forbidden endings: "y <eos>", "y z y", "z <eos>", "z y z".
    def masked(prefix, keep):
        p = lm.next_token_probs(lm.encode(prefix))[keep]
        return p / p.sum()

    (p_y, p_z), (y_z, y_eos), (z_y, z_eos) = (masked("Q", [1, 2]), masked("Q y", [2, 3]),
                                               masked("Q z", [1, 3]))
    expected = p_y * (y_eos + y_z * z_y) + p_z * (z_eos + z_y * y_z)
    assert shared[("Q", None)] == pytest.approx(expected, rel=1e-12)
