"""The rational ratio shared by GeoSample and FastSample (Balcer & Vadhan, full version Thm 4.7,
Lemma 4.9, Thm 4.10).

Balcer–Vadhan write the two-sided geometric with ratio α = x/(x+1) for x = 2^K, so that its
scaled CDFs are integers built from powers of x and x + 1. Nothing in Alg. 4.8, Alg. 4.11 or
their proofs needs x to be a power of two, or the ratio to be (x+1)/x: any rational e^ε̃ = a/b
(a > b ≥ 1) keeps every scaled CDF an integer, built from powers of a and b (d = (a+b)·a^{n−1}
for GeoSample), and the privacy ratio of neighbouring counts is exactly a/b. The power of two is
not needed for strict running time either: d is not a power of two in any case, and U(d) is the
paper's primitive. Rounding ε down to 1/k and e^ε̃ to (2^K+1)/2^K spent as little as 0.4·ε, and
ln(3/2) for every ε ≥ 1/2, so dpplug chooses a/b to spend the ε asked for:

    a/b = the rational with the smallest denominator b in [e^{(1−1/64)ε}, e^ε], with the largest
    numerator a ≤ b·e^ε,

both ends with rigorous directed rounding. So ln(a/b) ≤ ε, and ε̃ = ln(a/b) ≥ (63/64)·ε across the
whole schema. For ε ≤ 1/64 this is (x+1)/x with x = ⌈1/(e^ε − 1)⌉; from ε ≈ 3.3 on it is
⌊e^ε⌋/1. The smallest denominator keeps a, and with it every integer the samplers handle, as
short as the ε̃ allows: log₂ a ≈ log₂(1/ε) + 6 for small ε, and ε·log₂e for large ε.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gmpy2 import mpq

from dpplug.enclosure import Lift
from dpplug.exact import ceil_log2, exp_lower, exp_upper, simplest_between

#: The share of ε the ratio may leave unspent: ε̃ ≥ (1 − SLACK)·ε.
SLACK = mpq(1, 64)


@dataclass(frozen=True)
class GeometricParams:
    """e^ε̃ = a/b: the two-sided geometric Z with Pr[Z = z] ∝ (b/a)^{|z|} (BV's x + 1 and x)."""

    a: int
    b: int

    @classmethod
    def for_epsilon(cls, epsilon: Any) -> GeometricParams:
        epsilon = mpq(epsilon)
        bits = 64 + max(0, ceil_log2(1 / epsilon))
        high = exp_lower(epsilon, bits)  # ≤ e^ε
        low = exp_upper((1 - SLACK) * epsilon, bits)  # ≥ e^{(1−SLACK)ε}
        b = int(simplest_between(low, high).denominator)
        ratio = mpq(int(high * b), b)  # the largest numerator: a/b ≤ high ≤ e^ε
        return cls(int(ratio.numerator), int(ratio.denominator))

    @property
    def exp_epsilon(self) -> Any:
        """a/b = e^ε̃: the exact per-count likelihood-ratio bound."""
        return mpq(self.a, self.b)

    def tail(self, m: int) -> Any:
        """A formula of Pr[|Z| > m] = 2α^{m+1}/(1+α) = 2b^{m+1}/((a+b)·a^m), α = b/a."""
        a, b = self.a, self.b

        def formula(lift: Lift) -> Any:
            # As a power of α < 1: a^m and b^m themselves overflow an enclosure at large m.
            alpha = lift(b) / lift(a)
            return 2 * alpha ** (m + 1) / (lift(1) + alpha)

        return formula

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b}
