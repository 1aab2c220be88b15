"""The experiments that reproduce the book's figures: ``python -m tabular.experiments``
(``make experiments``). The repository's ``experiments/`` folder installs as
``tabular.experiments``; :mod:`tabular.experiments.harness` runs them."""

if __name__ != "tabular.experiments":  # a second copy would import every experiment twice
    raise ImportError("run the experiments as python -m tabular.experiments, "
                      f"not as {__name__}")
