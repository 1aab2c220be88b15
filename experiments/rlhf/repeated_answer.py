"""The repeated-answer scenario: a chosen answer and a rejected one that repeats part of
it, for the likelihood-displacement replay; the one scenario of the zoo whose compared
responses share n-gram contexts with each other and with responses never compared.

The prompt is the capital-of-France question, and the model a bigram (``n = 2``: a token
reads the row of the token before it), pre-trained on the capital-of-France corpus and
fine-tuned on five replies:

=====================================  ===========  =================================
reply                                  SFT demos    role
=====================================  ===========  =================================
"It is the city of Paris."             20           never compared (the likeliest)
"It is Paris."                         10           chosen
"It is, it is Paris."                  3            rejected: it repeats "it is"
"It is Lyon."                          2            never compared
"Paris."                               5            never compared
=====================================  ===========  =================================

and the comparisons are unanimous: 50 labellers prefer "It is Paris." to the
stammering "It is, it is Paris.".

Why the sharing is there. Every token the chosen response reads, the rejected one reads
too, in the same bigram row and with the same next token: ``log pi(rejected) =
log pi(chosen) + log pi(, | is) + log pi(it | ,) + log pi(is | it)``. DPO's gradient, the
difference of the two responses' gradients, therefore cancels on every shared token and
is left with the push down on the repetition's tokens; in the row of "is", pushing ","
down adds ``alpha * pi(.|is)`` to every logit of the row, which raises each
continuation in proportion to its probability: the continuation "the" of the likeliest,
never-compared reply gains the most, and "Paris", the chosen continuation, gains less
than the normaliser and falls whenever ``pi(Paris|is) + pi(,|is) < sum_b pi(b|is)^2``.
(The SFT model starts just on the other side, 0.420 against 0.403, so the first few steps
raise the chosen a little; the inequality turns once "," has lost some mass.)
The same rows are read by the never-compared replies (the row of "is" by "It is the city
of Paris." and "It is Lyon.", the rows of "Paris" and "." by "Paris."), so the mass the
chosen loses has somewhere to go. A per-prefix policy (a row per prefix) gives the two
responses their own rows after "It is", where the chosen token is pushed up directly:
the sharing the claim is about is exactly what separates the two policies.

Small on purpose: the prefix tree has 24 states, so every probability is exact and
DPO's 400 full-batch steps take a fraction of a second.
"""

from __future__ import annotations

from functools import cache

from tabular.envs import load_scenario
from tabular.envs.scenarios import Scenario

CHOSEN = "It is Paris."
"""The preferred reply of every comparison."""
REJECTED = "It is, it is Paris."
"""The dispreferred reply: the chosen one with "it is" said twice."""
REPLIES = ("It is the city of Paris.", CHOSEN, REJECTED, "It is Lyon.", "Paris.")
"""The scenario's replies, the likeliest SFT response first."""


@cache
def repeated_answer() -> Scenario:
    """The scenario (see the module's docstring); the capital-of-France prompt and
    corpus, so pre-training is the same world's."""
    capital = load_scenario()
    return Scenario(
        prompt=capital.prompt, replies=REPLIES, gold=(1.0, 0.8, -0.5, -1.5, 0.3),
        correct=(True, True, True, False, True),
        sft=tuple(zip((20, 10, 3, 2, 5), REPLIES, strict=True)),
        preferences=((50, CHOSEN, REJECTED),), corpus=capital.corpus, n=2, max_len=8)
