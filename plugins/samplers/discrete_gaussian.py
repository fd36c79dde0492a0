"""The discrete Gaussian mechanism on all of ℤ, sampled exactly (Canonne, Kamath, Steinke, "The
Discrete Gaussian for Differential Privacy", NeurIPS 2020, Alg. 1–3;
docs/mechanisms.md#discrete-gaussian).

c + Y with Pr[Y = y] ∝ e^{−y²/(2σ²)} for every integer y and a rational σ²
(:func:`dpplug.discrete_noise.discrete_gaussian`: exact Bernoulli(e^{−γ}) coins, discrete
Laplace proposals, rejection; every draw an exact uniform integer). For counts one apart it is
(1/(2σ²))-zCDP (CKS Thm 14 with Δ = 1), so with ρ the largest value for which ρ-zCDP implies
(ε, δ)-DP by CKS Cor. 13 (computed rigorously, :func:`dpplug.composition.largest_rho`),
σ² = 1/(2ρ) exactly and the mechanism is (ε, δ′)-DP with δ′ ≤ δ the conversion's exact bound.

Its probabilities e^{−y²/(2σ²)}/Σ_z e^{−z²/(2σ²)} are irrational, so it has no exact
:class:`~dpplug.pmf.Pmf`; it declares an enclosed law instead
(:func:`dpplug.discrete_noise.gaussian_enclosure`: rational bounds on every probability of a
window and on the mass outside it), from which the conformance suite decides its guarantee
rigorously and against which it replays and samples its code
(docs/conformance.md#enclosed-laws). Accuracy: the discrete Gaussian is
σ²-subgaussian (CKS §2.3), so Pr[|Y| > a] ≤ 2e^{−(a+1)²/(2σ²)}; a is the smallest integer with
that bound at most β. The number of draws is random (bounded in expectation) and data-independent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.composition import largest_rho, zcdp_delta
from dpplug.discrete_noise import discrete_gaussian, gaussian_enclosure, gaussian_error
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import exp_upper
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, epsilon_param, probability_param
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource


def epsilon_below(epsilon: Any) -> Any:
    """ε − 2^−60·max(1, ε): far enough below ε that e^ε̃ = exp_upper(ε′, 64) (within 2^−63 of
    e^ε′ relatively) is still below e^ε, so a guarantee rounded up stays within the budget."""
    epsilon = mpq(epsilon)
    return epsilon - mpq(max(1, epsilon)) / (1 << 60)


class DiscreteGaussian(CountingQuerySampler):
    name = "discrete-gaussian"
    summary = "Unbounded discrete Gaussian noise, exact, calibrated through zCDP to (ε, δ)."
    reference = (
        "Canonne, Kamath, Steinke 2020, The Discrete Gaussian for Differential Privacy: Alg. 3, "
        "Thm 14, Cor. 13"
    )
    schema = Schema(
        (
            epsilon_param("ε for one count of sensitivity 1.", high=16, low=mpq(1, 1 << 20)),
            probability_param("delta", "δ for one count of sensitivity 1.", high=mpq(1, 2)),
        )
    )
    conformance_cases = ({"epsilon": 2, "delta": mpq(1, 10**6)},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int | None = None
        self.d: int | None = None
        #: ε′, a rational a hair below ε: the guarantee is stated at a rational e^ε̃ ≥ e^ε′
        #: (rounded up, so sound) that stays below the e^ε asked for.
        self.epsilon_below = epsilon_below(self.params["epsilon"])
        self.rho = largest_rho(self.epsilon_below, self.params["delta"])
        self.sigma2 = 1 / (2 * self.rho)
        self.derived = {"rho": self.rho, "sigma2": self.sigma2}

    @property
    def guarantee(self) -> Guarantee:
        delta = zcdp_delta(self.rho, self.epsilon_below)
        return Guarantee(exp_upper(self.epsilon_below, 64), delta, COUNT_SENSITIVITY_1)

    def _pmf(self, count: int) -> Pmf:
        raise NotSupported(
            "the discrete Gaussian's probabilities e^(−y²/(2σ²))/Σ_z e^(−z²/(2σ²)) are irrational, "
            "so it has no exact pmf; use enclosed_law(count, bits) for rigorous bounds on them"
        )

    def _enclosed_law(self, count: int, bits: int) -> EnclosedLaw:
        return gaussian_enclosure(self.sigma2, count, bits)

    def _noise_variance(self, count: int) -> float:
        """Var of the noise, from the law enclosed at 128 bits (the same at every count: the
        noise does not depend on it): the window holds all but 2^−128 of the mass."""
        if "_variance" not in self.__dict__:
            law = gaussian_enclosure(self.sigma2, 0, 128).nearest_pmf(0)
            self.__dict__["_variance"] = float(sum(p * z * z for z, p in law.items()))
        variance: float = self.__dict__["_variance"]
        return variance

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        noise = discrete_gaussian(self.sigma2, source, counts.size)
        return counts + np.asarray(noise, dtype=np.int64)

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(gaussian_error(self.sigma2, beta), beta)
        formula = "smallest a with 2e^(−(a+1)²/(2σ²)) ≤ β (subgaussian)"
        return Accuracy(bound, bound, formula=formula)
