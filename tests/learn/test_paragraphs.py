"""The shared parameter paragraphs: every placeholder filled, defaults read from the
signature, a wrong key caught at import."""

import inspect
import re

import pytest

import tabular
from tabular.learn.paragraphs import PARAGRAPHS, shares_paragraphs


def public_functions():
    return [getattr(tabular, name) for name in tabular.__all__
            if inspect.isfunction(getattr(tabular, name))]


def test_no_placeholder_is_left():
    left = [f.__name__ for f in public_functions()
            if f.__doc__ and re.search(r"^ *\{[\w ]+\}$", f.__doc__, re.MULTILINE)]
    assert not left


def test_a_filled_paragraph_gives_the_signature_default():
    """``episodes`` defaults to 500 in sarsa and 100 in td0: one paragraph, two texts."""
    assert "    episodes : episodes per run, default 500.\n" in tabular.sarsa.__doc__
    assert "    episodes : episodes per run, default 100.\n" in tabular.td0.__doc__
    runs = PARAGRAPHS["runs"].split("\n")
    assert "\n    " + runs[0] + "\n    " + runs[1] + "\n" in tabular.sarsa.__doc__


def test_placeholders_keep_their_indent_and_order():
    def learner(*, gamma=0.9, seed=3):
        """Doc.

        Parameters
        ----------
        {seed gamma}
        """

    assert shares_paragraphs(learner) is learner
    assert learner.__doc__.split("\n")[4:6] == [
        "        seed : seed of the runs' random streams (same seed, same numbers), default 3.",
        "        gamma : discount in [0, 1], default 0.9."]


def test_an_unknown_key_or_a_missing_default_raises():
    def unknown():
        """{no_such_paragraph}"""

    def no_default(gamma):
        """{gamma}"""

    with pytest.raises(KeyError, match="no_such_paragraph"):
        shares_paragraphs(unknown)
    with pytest.raises(ValueError, match="no_default: paragraph 'gamma' wants a default"):
        shares_paragraphs(no_default)
