"""What a set-union selector declares its release to be
(:meth:`~.base.SetUnionSelector.declared_release`), so that the conformance suite can enumerate
the release's law independently of the code that makes it.

- :class:`GaussianRounds`: rounds of the weighted Gaussian (Gopi et al. ICML 2020; DP-SIPS).
  In round r, a unit whose t bounded labels are not yet released gives each of them
  ``rounds[r].weights[t − 1]`` grid units; a label is kept iff its total plus N_ℤ(0, σ_r²) noise
  is at least T_r; the labels kept leave the units' sets before the next round.
- :class:`GeometricPolicy`: Gopi et al.'s ℓ1-descent policy. The units, in canonical order, each
  spend ``grid`` units on their bounded labels below ``cutoff``, one at a time to the label below
  the cutoff that has received the fewest of them so far (ties: canonical order); a label is kept
  iff its total plus two-sided geometric noise of ratio ``alpha`` is at least ``threshold``.

:func:`compose_rounds` is the δ that Gaussian rounds give at an e^ε (the argument of
:mod:`dpplug.plugins.set_union.calibration`): plugins declare it, the conformance suite
recomputes it from the declared rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from gmpy2 import mpq

from dpplug.bounds import ball, precise, upper
from dpplug.enclosure import Enclosure
from dpplug.exact import Rat
from dpplug.kinds.partition_selector.gaussian_dp import gdp_delta
from dpplug.kinds.set_union_selector.thresholded_gaussian import RoundCertificate


@dataclass(frozen=True)
class GaussianRounds:
    """Rounds of the weighted Gaussian (module docstring)."""

    rounds: tuple[RoundCertificate, ...]


@dataclass(frozen=True)
class GeometricPolicy:
    """The ℓ1-descent policy with two-sided geometric noise (module docstring)."""

    grid: int
    alpha: Rat
    threshold: int
    cutoff: int


@dataclass(frozen=True)
class Composition:
    """What rounds of the weighted Gaussian give for one or two units changed (``units``):
    μ ≥ √(units·Σ μ_r²) (DRS Cor. 3.3), A = Σ A_r the appearing labels' bound, the slack
    (1 + e^ε)·c·Σ τ_r of the pairs outside the certified windows (c = units·Δ₀ labels), and
    δ = δ_μ(e^ε·(1 − A)) + A + slack (Gopi et al. Thm 4.1 with the appearing labels conditioned
    away), every term a rigorous rational upper bound; δ is 1 when A ≥ 1."""

    mu: Rat
    appear: Rat
    slack: Rat
    delta: Rat


def compose_rounds(
    rounds: tuple[RoundCertificate, ...], exp_epsilon: Rat, units: int
) -> Composition:
    """The :class:`Composition` of *rounds* at *exp_epsilon* for *units* (1 for add/remove, 2
    for replace-one) units changed."""
    with precise():
        squares = sum((ball(r.mu()) ** 2 for r in rounds), ball(0))
        mu = upper((ball(units) * squares).sqrt())
    appear = sum((r.appear() for r in rounds), mpq(0))
    coordinates = units * rounds[0].items
    slack = (1 + exp_epsilon) * coordinates * sum((r.tau for r in rounds), mpq(0))
    if appear >= 1:
        return Composition(mu, appear, slack, mpq(1))
    delta = gdp_delta(Enclosure.of(mu), exp_epsilon * (1 - appear)) + appear + slack
    return Composition(mu, appear, slack, delta)
