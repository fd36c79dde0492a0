"""Discrete Gaussian noise compared with a threshold, bounded rigorously: the keep probabilities
of the weighted Gaussian set-union mechanism (Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin,
"Differentially Private Set Union", ICML 2020, §4) run on the exact discrete Gaussian (Canonne,
Kamath, Steinke, NeurIPS 2020), and their Gaussian differential privacy (Dong, Roth, Su 2022).

Z ~ N_ℤ(0, s²), U(k) = Pr[Z > k] (:mod:`.gaussian_tails`). An item whose weighted total is h
(grid units) is kept iff h + Z ≥ T, with probability π(h) = Pr[Z ≥ T − h].

- :func:`tail_upper`, :func:`tail_lower`: Σ_{y≥m} g(y) lies in [∫_m^∞ g, g(m) + ∫_m^∞ g] for
  m ≥ 0 (g decreasing there), so Φ̄(m/s)/θ ≤ Pr[Z ≥ m] ≤ φ(m/s)/s + Φ̄(m/s).
- :func:`closeness` (the Gaussian-DP certificate): U(k) ∈ [Φ̄(x_k + ζ), Φ̄(x_k − ζ)] with
  x_k = (k + ½)/s for every k in [0, reach] (and so, by the symmetry U(−k−1) = 1 − U(k), for
  every k in [−reach − 1, reach]). By the Euler–Maclaurin bound |θ·U(k) − Φ̄(x)| ≤ φ(x)·e(x)
  (:func:`~.gaussian_tails.em_deviation`, e increasing in x), and since Φ̄(x − ζ) − Φ̄(x) ≥ ζφ(x)
  for x ≥ ζ/2 and Φ̄(x) − Φ̄(x + ζ) ≥ ζφ(x + ζ) = ζφ(x)e^{−xζ−ζ²/2}, with θ ≥ 1 and
  Φ̄(y) ≤ 1.26·φ(y) (the Mills ratio is at most √(π/2)), it is enough that ζ ≤ 1/s and

      ζ ≥ e(X)·e^{Xζ + ζ²/2} + 2(θ − 1),   X = (reach + ½)/s,

  one inequality checked in ball arithmetic at the far end of the window. Then Φ⁻¹(π(h)) lies
  within ζ of (h − T + ½)/s, so for weights moved by w the pair (π(h), π(h + w)) of Bernoulli
  laws satisfies Φ⁻¹(π(h + w)) − Φ⁻¹(π(h)) ≤ w/s + 2ζ: it is (w/s + 2ζ)-GDP (DRS Def. 2.6: a
  pair (p, q) is μ-GDP iff q ≤ Φ(Φ⁻¹(p) + μ)). Pairs beyond the window are within total
  variation τ ≥ U(window) of a GDP pair (:class:`RoundCertificate`), τ = Φ̄(x_window − ζ).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import flint
from gmpy2 import isqrt, mpq, mpz

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.exact import Rat
from dpplug.kinds.set_union_selector.gaussian_tails import (
    GaussianTail,
    em_deviation,
    keep_enclosure,
    normaliser_excess,
    phi_bar,
)
from dpplug.kinds.set_union_selector.keep_draws import Keeps

#: Working precision of the closeness check (bits).
CHECK_BITS = 96


def _sigma(sigma2: Rat) -> Ball:
    return ball(sigma2).sqrt()


def tail_upper(sigma2: Rat, m: int) -> Rat:
    """A rational ≥ Pr[Z ≥ m] for m ≥ 0: φ(m/s)/s + Φ̄(m/s) (see the module docstring)."""
    if m < 0:
        return mpq(1)
    with precise():
        s = _sigma(sigma2)
        x = ball(m) / s
        density = (-(x * x) / 2).exp() / (2 * flint.arb.pi()).sqrt() / s
        return min(mpq(1), upper(density + phi_bar(x)))


def tail_lower(sigma2: Rat, m: int) -> Rat:
    """A rational ≤ Pr[Z ≥ m], any integer m: Φ̄(m/s)/θ for m ≥ 0, and
    1 − (upper bound of Pr[Z ≥ 1 − m]) below (the law is symmetric)."""
    if m <= 0:
        return max(mpq(0), 1 - tail_upper(sigma2, 1 - m))
    with precise():
        theta = 1 + normaliser_excess(sigma2)
        return max(mpq(0), lower(phi_bar(ball(m) / _sigma(sigma2)) / theta))


def closeness(sigma2: Rat, zeta: Rat, reach: int, window: int) -> Rat | None:
    """If U(k) ∈ [Φ̄(x_k + ζ), Φ̄(x_k − ζ)] for every k in [0, reach] (shown by the bound of the
    module docstring), a rational τ ≥ U(window) (0 ≤ window ≤ reach); ``None`` if the bound
    cannot show it for this ζ."""
    if not 0 <= window <= reach:
        raise ValueError(f"cannot check closeness over [0, {reach}] with window {window}")
    with precise(CHECK_BITS):
        s, z, half = _sigma(sigma2), ball(zeta), ball(mpq(1, 2))
        far = (ball(reach) + half) / s
        needed = em_deviation(sigma2, far) * (far * z + z * z / 2).exp()
        needed += 2 * normaliser_excess(sigma2)
        if not (z * s <= 1 and needed <= z):
            return None
        return min(mpq(1), upper(phi_bar((ball(window) + half) / s - z)))


@functools.cache
def unit_weights(grid: int, items: int) -> tuple[int, ...]:
    """w_t = ⌊G/√t⌋ exactly (the largest integer with t·w² ≤ G²) for t = 1 … *items*: a unit's
    weight vector has ℓ₂ norm ≤ G, one unit of the grid G standing for weight 1 (Gopi et al.'s
    ℓ₂ weighting, rounded down). Computed once per (G, items): a distributed run reads it for
    every unit."""
    return tuple(int(isqrt(mpz(grid * grid // t))) for t in range(1, items + 1))


@dataclass(frozen=True)
class RoundCertificate:
    """One round of the weighted Gaussian: noise N_ℤ(0, ``sigma2``) in units of 1/``grid``,
    threshold ``threshold``, units of at most ``items`` items weighted by :func:`unit_weights`,
    and the closeness certificate (``zeta`` over [0, ``reach``], with Pr[Z > window] ≤ ``tau``,
    ``window`` = reach − grid).

    - ``mu``: one unit added or removed moves each of its t ≤ ``items`` items by w_t ≤ G/√t, so
      the pairs it changes are (w_t/s + 2ζ)-GDP and compose to
      √(Σ (w_t/s + 2ζ)²) ≤ G/s + 2ζ√items (DRS Cor. 3.3), returned as a rational upper bound.
    - ``appear``: items that no other unit has are kept only by the unit's own weight, with
      probability ≤ max_t 1 − (1 − Pr[Z ≥ T − w_t])^t (:func:`tail_upper`).
    - ``tau``: a pair with an end outside [−window, window] has both ends on one side beyond it
      (w ≤ G), so it is within total variation τ of a GDP pair."""

    grid: int
    items: int
    sigma2: Rat
    threshold: int
    zeta: Rat
    reach: int
    tau: Rat

    @property
    def weights(self) -> tuple[int, ...]:
        return unit_weights(self.grid, self.items)

    def mu(self) -> Rat:
        with precise():
            value = (
                ball(self.grid) / _sigma(self.sigma2)
                + 2 * ball(self.zeta) * ball(self.items).sqrt()
            )
            return upper(value)

    def appear(self) -> Rat:
        worst = mpq(0)
        with precise():
            for t, w in enumerate(self.weights, start=1):
                p = ball(tail_upper(self.sigma2, self.threshold - w))
                worst = max(worst, upper(1 - (1 - p) ** t))
        return min(worst, mpq(1))

    def keep(self, weight: int) -> tuple[Rat, Rat]:
        """[lo, hi] ∋ π(weight), the probability that an item of that weighted total is kept."""
        return keep_enclosure(self.sigma2, self.threshold - weight)


class GaussianKeeps(Keeps):
    """One round's keep decisions Z_i ≥ m_i for independent Z_i ~ N_ℤ(0, σ²) (a
    :class:`~.keep_draws.Keeps` of :class:`~.gaussian_tails.GaussianTail`): irrational
    probabilities, so :meth:`law` refuses and :meth:`enclosed` gives intervals."""

    def __init__(self, sigma2: Rat, thresholds: tuple[int, ...]) -> None:
        super().__init__(GaussianTail(mpq(sigma2)), thresholds)
        self.sigma2 = mpq(sigma2)
