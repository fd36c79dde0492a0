"""Parameters shared by GeoSample and FastSample (Balcer & Vadhan, full version Thm 4.7 /
Lemma 4.9).

A dpplug sampler's ``epsilon`` is its own guarantee for one counting query of sensitivity 1. The
paper's GeometricMechanism_{n,ε′} is ε′/2-DP for a counting query, so the paper parameter is
ε′ = 2·epsilon rounded down into ℕ⁻¹ = {1/k}. Then K = ⌈log₂(2/ε′)⌉, x = 2^K and the achieved
guarantee is e^{ε̃/2} = (x+1)/x exactly, with ε̃ = 2·ln(1+2^-K) ∈ (4ε′/9, ε′].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gmpy2 import mpq

from dpplug.exact import ceil_log2
from dpplug.params import unit_fraction


@dataclass(frozen=True)
class GeometricParams:
    """ε′ ∈ ℕ⁻¹ (the paper's ε), K and x = 2^K; the ratio α = x/(x+1) of the geometric."""

    paper_epsilon: Any  # mpq, 1/k
    K: int
    x: int

    @classmethod
    def for_epsilon(cls, epsilon: Any) -> GeometricParams:
        paper_epsilon = unit_fraction(min(2 * mpq(epsilon), mpq(1)))
        K = ceil_log2(2 / paper_epsilon)
        return cls(paper_epsilon, K, 1 << K)

    @property
    def exp_epsilon(self) -> Any:
        """(x+1)/x = e^{ε̃/2}: the exact per-count likelihood-ratio bound."""
        return mpq(self.x + 1, self.x)

    def tail(self, a: int) -> Any:
        """Pr[|Z| > a] = 2x·x^a / ((2x+1)(x+1)^a) for the two-sided geometric Z of ratio x/(x+1)."""
        x = self.x
        return mpq(2 * x * x**a, (2 * x + 1) * (x + 1) ** a)

    def as_dict(self) -> dict[str, Any]:
        return {"paper_epsilon": self.paper_epsilon, "K": self.K, "x": self.x}
