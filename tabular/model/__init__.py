"""The one model format and the policies that act in it.

- :mod:`~tabular.model.mdp` -- :class:`TabularMDP`, padded ``[S, A, K]`` successor
  arrays and a start distribution, validated at construction (:class:`MDPError`);
- :mod:`~tabular.model.compact` -- how the arrays are stored (int32 successors carrying
  ``done``, codes into the distinct ``(prob, reward)`` pairs);
- :mod:`~tabular.model.outcomes` and :mod:`~tabular.model.sampling` -- how kernels read
  an outcome and draw ``(s', r, done)``: learners reach the dynamics only through
  :func:`~tabular.model.sampling.sample_step`;
- :mod:`~tabular.model.policy` -- :class:`SoftmaxPolicy`, logits over rows of states;
- :mod:`~tabular.model.graph` -- reachability on the model's transition graph.
"""

from tabular.model.mdp import MDPError, TabularMDP
from tabular.model.policy import SoftmaxPolicy

__all__ = ["MDPError", "SoftmaxPolicy", "TabularMDP"]
