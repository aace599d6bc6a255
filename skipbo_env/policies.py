"""Deprecated alias of :mod:`skipbo_env.bots.greedy` (the scripted decision rules moved to
:mod:`skipbo_env.bots`); this name goes away in a later release."""

from __future__ import annotations

import sys
import warnings

from .bots import greedy

warnings.warn(
    "skipbo_env.policies is deprecated: import skipbo_env.bots.greedy instead", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = greedy
