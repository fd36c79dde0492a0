"""Exact output laws.

A :class:`Pmf` maps outputs to exact rational probabilities. Bounded mechanisms have a finite
support and the mapping holds all of it. Unbounded laws with geometric tails (the discrete
Laplace) hold a finite window and continue it exactly beyond both ends: ``prob(z)`` is exact for
every integer and ``outside_mass`` is the exact mass outside the window, so ``total() == 1`` can
be checked exactly either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gmpy2 import mpq


class Pmf(Mapping[int, Any]):
    """Exact probabilities of integer outputs.

    ``probs``: the window (for bounded laws, the whole support), keyed by output.
    ``tail_ratio``: ``None`` for a bounded law; otherwise r in (0, 1) such that
    P(hi + j) = P(hi)·r^j and P(lo − j) = P(lo)·r^j for j ≥ 1, where [lo, hi] is the window.
    """

    def __init__(self, probs: Mapping[int, Any], tail_ratio: Any = None) -> None:
        self._probs = {int(z): mpq(p) for z, p in sorted(probs.items())}
        if not self._probs:
            raise ValueError("a pmf needs at least one output")
        self.tail_ratio = None if tail_ratio is None else mpq(tail_ratio)
        self.low = next(iter(self._probs))
        self.high = next(reversed(self._probs))

    @property
    def bounded(self) -> bool:
        return self.tail_ratio is None

    def __getitem__(self, z: int) -> Any:
        return self._probs[z]

    def __iter__(self) -> Iterator[int]:
        return iter(self._probs)

    def __len__(self) -> int:
        return len(self._probs)

    def __repr__(self) -> str:
        probs = ", ".join(f"{z}: {p}" for z, p in self._probs.items())
        tail = "" if self.tail_ratio is None else f", tail_ratio={self.tail_ratio}"
        return f"Pmf({{{probs}}}{tail})"

    def prob(self, z: int) -> Any:
        """P(z) exactly, for any integer z (0 outside a bounded support)."""
        if z in self._probs:
            return self._probs[z]
        if self.tail_ratio is None:
            return mpq(0)
        if z > self.high:
            return self._probs[self.high] * self.tail_ratio ** (z - self.high)
        if z < self.low:
            return self._probs[self.low] * self.tail_ratio ** (self.low - z)
        return mpq(0)

    @property
    def outside_mass(self) -> Any:
        """Exact probability of the outputs outside the window (0 for a bounded law)."""
        if self.tail_ratio is None:
            return mpq(0)
        r = self.tail_ratio
        return (self._probs[self.low] + self._probs[self.high]) * r / (1 - r)

    def total(self) -> Any:
        """Σ P(z) over all integers, exactly; 1 for a correct law."""
        return sum(self._probs.values(), mpq(0)) + self.outside_mass
