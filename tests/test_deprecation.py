"""Old names still work where they lived, each with one DeprecationWarning naming its new place."""

from __future__ import annotations

import importlib
import warnings

import pytest

MOVED = [
    ("skipbo_env.aec", "STOCK_CARD_REWARD", "skipbo_env.episode"),
    ("skipbo_env.single", "ILLEGAL_ACTION_MODES", "skipbo_env.episode"),
    ("skipbo_env.training.policy", "ScorerPolicy", "skipbo_env.agents.scorer"),
    ("skipbo_env.agents.scorer", "FEATURES_VERSION", "skipbo_env.nets"),
]
"""(old module, name, new module); ``agents.scorer.ActionScorer``'s warning is tests/test_nets.py's."""


@pytest.mark.parametrize(("old", "name", "new"), MOVED, ids=lambda v: str(v))
def test_an_old_name_warns_once_and_is_the_new_object(old, name, new):
    module = importlib.import_module(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = getattr(module, name), getattr(module, name)
    assert first is second is getattr(importlib.import_module(new), name)
    ours = [w for w in caught if issubclass(w.category, DeprecationWarning) and f"{old}.{name}" in str(w.message)]
    assert len(ours) <= 1  # once per process: an earlier test may have taken it
    if ours:
        assert f"moved to {new}.{name}" in str(ours[0].message)


def test_a_fresh_old_name_warns_exactly_once():
    from skipbo_env.deprecation import moved_names

    getattr_ = moved_names("some.module", {"OLD": "skipbo_env.episode:STOCK_CARD_REWARD"})
    with pytest.warns(DeprecationWarning, match="some.module.OLD moved to skipbo_env.episode.STOCK_CARD_REWARD"):
        value = getattr_("OLD")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr_("OLD") == value
    with pytest.raises(AttributeError, match="has no attribute 'NEW'"):
        getattr_("NEW")


def test_unknown_names_still_raise_attribute_error():
    import skipbo_env.aec

    with pytest.raises(AttributeError):
        skipbo_env.aec.NOT_A_NAME  # noqa: B018
