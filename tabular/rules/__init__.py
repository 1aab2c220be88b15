"""Update rules, one small Numba function each (the way rlax writes them).

- :mod:`tabular.rules.values` -- arithmetic of eq. 2.4 made exact for ``-inf``,
  action selection (greedy, epsilon-greedy) and the one-step value targets of
  chapter 6 (TD, SARSA, expected SARSA, Q-learning, double Q-learning);
- :mod:`tabular.rules.returns` -- the one backward recursion behind returns-to-go,
  Monte Carlo and n-step returns, and GAE;
- :mod:`tabular.rules.policy_gradient` -- softmax, ``grad log pi``, the entropy
  gradient, the clipped surrogate, the KL-shaped reward and the preference losses;
- :mod:`tabular.rules.traces` -- eligibility traces (accumulating, replacing, dutch),
  the traced update and the true online correction, and lambda-returns;
- :mod:`tabular.rules.bandits` -- UCB selection and the incremental mean;
- :mod:`tabular.rules.nstep` -- importance-sampling ratios, tree-backup and Q(sigma)
  returns;
- :mod:`tabular.rules.planning` -- Dyna-Q+'s exploration bonus and prioritized
  sweeping's priority;
- :mod:`tabular.rules.linear` -- the linear estimate ``x(s) . w``, the
  (semi-)gradient step of chapter 9, the action values of chapter 10 and the
  average-reward step of differential SARSA.

Rules import no learner module; the learners in :mod:`tabular.learn.td`, :mod:`tabular.learn.mc`,
:mod:`tabular.pg.learners` and :mod:`tabular.rlhf` compose them in their episode loops. A rule
is a plain ``@njit``, compiled once and inlined by LLVM into each kernel, unless it is
``inline="always"`` (inlined into numba's IR, and so re-typed in every kernel): action
selection over a row, the softmax and ``grad log pi``, the returns and traces over
arrays, ``td_error`` and ``td_target``, where the kernels need it for their speed
(``docs/decisions/2026-12-02-inlining-of-rules.md``).
"""
