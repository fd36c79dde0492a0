"""Gaussian differential privacy of keep-probability curves (Dong, Roth, Su, "Gaussian
Differential Privacy", JRSS-B 2022), with rigorous enclosures (:mod:`dpplug.enclosure`).

One partition kept with probability p at n units and q ≥ p at n + 1 is a pair of Bernoulli laws.
Its trade-off curve is the polygon (0, 1), (p, 1 − q), (1, 0), which lies above the Gaussian one
G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (the pair is μ-GDP, in both directions, G_μ being symmetric) iff
q ≤ Φ(Φ⁻¹(p) + μ) (DRS Def. 2.6 and Prop. 2.4 for the symmetry). Independent μ_i-GDP pairs
compose to √(Σμ_i²)-GDP (DRS Cor. 3.3), and μ-GDP gives (ε, δ(ε))-DP for every ε with
δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (DRS Cor. 2.13; Balle–Wang 2018 Thm 8 with μ = Δ/σ).
That is Gopi et al.'s calibration of Gaussian thresholding: a unit in ℓ₀ partitions moves ℓ₀
coordinates by 1, an ℓ₂ shift of √ℓ₀.

:class:`GaussianPairs` turns a curve's μ into the guarantee of a whole selection, counting the
pairs that are not GDP: a partition going from keep probability 0 to a positive one (appearing,
as a partition new to the data does) and steps above the Gaussian bound by at most ``slack``
(on the 2^-63 grid, where rounding can stop a table from growing, see
:meth:`dpplug.plugins.partition.keep_table.KeepTable.build`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq
from scipy import special

from dpplug.enclosure import DOWN, PRECISION, UP, Enclosure

_SQRT2 = Enclosure.of(2).sqrt()


def normal_cdf(x: Enclosure) -> Enclosure:
    """Φ(x) = erfc(−x/√2)/2, enclosed."""
    return (-x / _SQRT2).erfc() / 2


def normal_cdf_bound(x: mpfr, upper: bool) -> mpfr:
    """Φ(x) rounded up (*upper*) or down, rigorously, with one erfc evaluation (MPFR's erfc
    dominates the cost of the Gaussian selector's table)."""
    y = -Enclosure.of(x) / _SQRT2  # erfc is decreasing
    return UP.div(UP.erfc(y.lo), 2) if upper else DOWN.div(DOWN.erfc(y.hi), 2)


def quantile_below(p: Any) -> mpfr:
    """A rigorous lower bound ℓ ≤ Φ⁻¹(p) for 0 < p < 1, within about 10⁻²⁵ of it: a float
    estimate, one Newton step at 128 bits, then lowered until Φ(ℓ) ≤ p is checked."""
    p = mpq(p)
    guess = special.ndtri(float(p)) if p <= mpq(1, 2) else -special.ndtri(float(1 - p))
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        x = mpfr(float(guess))
        density = gmpy2.exp(-x * x / 2) / gmpy2.sqrt(2 * gmpy2.const_pi())
        x -= (gmpy2.erfc(-x / gmpy2.sqrt(2)) / 2 - p) / density
        step = mpfr("1e-25") * (1 + abs(x))
        low = x - step
        while normal_cdf_bound(low, upper=True) > p:
            step *= 1024
            low = x - step
    return low


def step_bound(p: Any, mu: Any) -> mpfr:
    """A lower bound on Φ(Φ⁻¹(p) + μ): the largest keep probability a μ-GDP pair allows after
    p (0 < p < 1)."""
    return normal_cdf_bound(DOWN.add(quantile_below(p), Enclosure.of(mpq(mu)).lo), upper=False)


def gdp_delta(mu: Enclosure, exp_epsilon: Any) -> Any:
    """A rigorous upper bound (an exact rational ≥ 0) on δ(ε) of μ-GDP at e^ε (μ > 0)."""
    epsilon = Enclosure.of(mpq(exp_epsilon)).log()
    shift = -epsilon / mu
    delta = normal_cdf(shift + mu / 2) - Enclosure.of(mpq(exp_epsilon)) * normal_cdf(shift - mu / 2)
    return max(mpq(delta.hi), mpq(0))


def pair_slack(p: Any, q: Any, mu: Any) -> Any:
    """A rigorous upper bound on how far the pair (p, q), 0 < p ≤ q ≤ 1, is from μ-GDP in total
    variation, on each side: the larger of q − Φ(Φ⁻¹(p) + μ) (lowering q makes it GDP, the
    perturbation the direction q → p needs) and Φ(Φ⁻¹(q) − μ) − p (raising p, for p → q); 0 for
    a μ-GDP pair."""
    p, q = mpq(p), mpq(q)
    forward = q - mpq(step_bound(p, mu)) if q < 1 else 1 - p
    if q < 1:
        above = -quantile_below(1 - q)  # ≥ Φ⁻¹(q)
        reverse = mpq(normal_cdf_bound(UP.sub(above, Enclosure.of(mpq(mu)).lo), upper=True)) - p
    else:
        reverse = 1 - p
    return max(forward, reverse, mpq(0))


@dataclass(frozen=True)
class GaussianPairs:
    """A keep-probability curve whose pairs of neighbouring positive values are μ-GDP, except
    that each may exceed the Gaussian bound by at most ``slack`` in total variation."""

    mu: Any  # mpq > 0
    slack: Any  # mpq ≥ 0

    def delta(self, exp_epsilon: Any, changed: int, squares: int, steps: int, appear: Any) -> Any:
        """δ at e^ε for a change of at most *changed* partitions, by at most *steps* units in
        all and with Σ(units moved)² ≤ *squares*, where a partition whose keep probability was 0
        is kept with probability at most *appear* after the change (rigorous, exact rational).

        The GDP pairs compose to μ√squares-GDP. Appearing partitions are kept with probability
        at most δ_A = 1 − (1 − appear)^changed: in one direction that adds δ_A; in the other,
        an output in which they are dropped is (1 − δ_A) times less likely on the side that has
        them, so δ is taken at e^ε·(1 − δ_A). Slack adds steps·slack (the perturbed pairs are on
        the side that loses probability, so without a factor e^ε)."""
        appearing = 1 - (1 - mpq(appear)) ** changed
        if not squares:
            return appearing + steps * mpq(self.slack)
        mu = Enclosure.of(mpq(self.mu)) * Enclosure.of(squares).sqrt()
        gaussian = gdp_delta(mu, mpq(exp_epsilon) * (1 - appearing))
        return gaussian + appearing + steps * mpq(self.slack)
