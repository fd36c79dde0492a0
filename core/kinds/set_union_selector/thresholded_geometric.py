"""Two-sided geometric (discrete Laplace) noise compared with a threshold: the keep decisions of
the policy Laplace set union (Gopi et al. ICML 2020), whose probabilities are exact rationals.

Z has Pr[Z = k] = (1 − α)/(1 + α)·α^|k| for a rational α ∈ (0, 1), so

    Pr[Z ≥ m] = α^m/(1 + α) for m ≥ 1, and 1 − α^{1−m}/(1 + α) for m ≤ 0,

and moving m by one multiplies Pr[Z ≥ m] and Pr[Z < m] each by a factor in [α, 1/α]: a label
whose total moves by d is kept or dropped with probabilities within a factor α^{−|d|}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gmpy2 import mpq

from dpplug.bounds import ball, lower, precise, upper
from dpplug.exact import Rat
from dpplug.kinds.set_union_selector.keep_draws import Keeps, TailLaw, scaled_bracket

#: Precision (bits) of the balls the brackets come from.
BRACKET_BITS = 128


@dataclass(frozen=True)
class GeometricTail(TailLaw):
    """Pr[Z ≥ m] for the two-sided geometric law of ratio ``alpha`` (module docstring)."""

    alpha: Rat
    exact: ClassVar[bool] = True

    def probability(self, m: int) -> Rat:
        """Pr[Z ≥ m], exactly."""
        alpha = mpq(self.alpha)
        if m >= 1:
            return alpha**m / (1 + alpha)
        return 1 - alpha ** (1 - m) / (1 + alpha)

    def enclose(self, m: int, bits: int) -> tuple[Rat, Rat]:
        p = self.probability(m)
        return p, p

    def bracket(self, m: int) -> tuple[int, int]:
        """From balls (α^m has |m|·(bits of α) bits exactly; its ball has 128)."""
        with precise(BRACKET_BITS):
            alpha = ball(self.alpha)
            value = alpha ** abs(m) / (1 + alpha) if m >= 1 else 1 - alpha ** (1 - m) / (1 + alpha)
            return scaled_bracket(max(mpq(0), lower(value)), min(mpq(1), upper(value)))


class GeometricKeeps(Keeps):
    """One round's keep decisions Z_i ≥ m_i for independent two-sided geometric Z_i of ratio α
    (a :class:`~.keep_draws.Keeps` of :class:`GeometricTail`, with an exact law)."""

    def __init__(self, alpha: Rat, thresholds: tuple[int, ...]) -> None:
        super().__init__(GeometricTail(mpq(alpha)), thresholds)
        self.alpha = mpq(alpha)
