"""Batched engine and vector environments (imports numba; ``import skipbo_env`` does not import this)."""

from .engine import BatchEngine

__all__ = ["BatchEngine"]
