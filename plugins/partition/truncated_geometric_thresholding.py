"""Thresholding with k-TSGD noise (Desfontaines et al., Def. 8, Thm 5–6, and §5 for public
partitions; docs/mechanisms.md#truncated-geometric-thresholding), releasing the noisy count of
every kept partition.

Each partition present in the data gets iid noise X ~ k-TSGD (:class:`TruncatedGeometric` with
the per-partition (ε_c, δ_c), e^{ε_c} rational) and is released with its noisy count n + X iff
n − m + 1 + X ≥ k + 1 (m the pre-threshold; m = 1 is plain Def. 8). An absent partition would get at
most k, so this equals adding noise to every partition and thresholding: (ε_c, δ′)-DP per
partition with δ′ = Pr[X = k] ≤ δ_c, composed over the ℓ₀ (or 2ℓ₀) partitions a unit touches.
Its keep probability is exactly the optimal π at (ε̃, δ′) (Thm 5: δ′ = Pr[X = k] makes
(1/ε̃)ln((e^ε̃ + 2δ′ − 1)/((e^ε̃ + 1)δ′)) the integer k).

**The per-partition (ε̃, δ′) it runs at** (:func:`spending_noise`). k is an integer, so at ε_c
itself δ′ falls anywhere in (δ_c/e^{ε_c}, δ_c]: 47% of δ_c at ε = 1, δ = 10⁻¹⁰, 16% at ε = 2,
δ = 10⁻⁸. With k fixed, δ′ grows as ε̃ falls, so the noise runs at the largest ε̃ ≤ ε_c whose δ′
is at least :data:`DELTA_SPENT` of δ_c (ε_c itself when that already holds): the release spends
at least 95% of δ and gives up the least ε that takes (3% at ε = 1, δ = 10⁻¹⁰). The keep curve
moves by less than 0.01 either way there; its distance from the optimal π at (ε_c, δ_c), up to
0.29, is the truncated geometric's: it meets that curve only where Thm 5's logarithm is an
integer (optimal-partition-selection is that curve, on the 2^-63 grid).

Public partitions (§5): with ``public_threshold`` τ_pub, a partition marked public in ``select``
(it may have 0 units) is released iff its noisy count reaches τ_pub, any data-independent
integer; this is post-processing of the same noisy counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import BadParameter, NotSupported
from dpplug.exact import as_rational
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import PartitionSelector, Selection
from dpplug.param_types import INTEGER
from dpplug.params import Param, Schema
from dpplug.plugins.partition.budget import SELECTOR_PARAMS, Budget
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

#: The least share of the per-partition δ the noise spends.
DELTA_SPENT = mpq(95, 100)
#: Bisection steps of :func:`spending_noise` (ε̃ to 2^-24 of ε_c; δ′ moves by about k·ε_c·2^-24).
_STEPS = 24


def spending_noise(epsilon: Any, delta: Any) -> TruncatedGeometric:
    """k-TSGD for one partition's (ε_c, δ_c) that spends at least :data:`DELTA_SPENT` of δ_c:
    at ε_c if its δ′ = Pr[X = k] does, else at the largest ε̃ < ε_c (to 2^-24·ε_c) whose δ′ does.
    As ε̃ falls, δ′ grows (k fixed) towards 1/(2k + 1), the uniform law's, until k steps up,
    where δ′ is again as close to δ_c as k allows; "k above ε_c's, or δ′ ≥ 95% of δ_c" therefore
    holds exactly below a point, which the bisection finds, and there k is ε_c's and
    δ′ ∈ [0.95·δ_c, δ_c] (module docstring). Where no ε̃ the sampler takes gets there (δ_c near
    1/(2k + 1), tiny ε_c), the noise stays at ε_c."""
    full = TruncatedGeometric(epsilon=epsilon, delta=delta)
    floor = DELTA_SPENT * as_rational(delta)
    if full.delta >= floor:
        return full

    def spends(candidate: Any) -> bool:
        noise = TruncatedGeometric(epsilon=candidate, delta=delta)
        return noise.k > full.k or noise.delta >= floor

    smallest = next(p.low for p in TruncatedGeometric.schema if p.name == "epsilon")
    high = as_rational(epsilon)
    low = max(high / 2, smallest)
    while not spends(low):
        if low == smallest:
            return full
        high, low = low, max(low / 2, smallest)
    for _ in range(_STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if spends(middle) else (low, middle)
    noise = TruncatedGeometric(epsilon=low, delta=delta)
    return noise if noise.k == full.k else full


class TruncatedGeometricThresholding(PartitionSelector):
    name = "truncated-geometric-thresholding"
    releases_counts = True
    summary = "k-TSGD noise and a threshold at k+1; releases noisy counts; public partitions."
    reference = (
        "Desfontaines, Voss, Gipson, Mandayam, Differentially private partition selection: "
        "Def. 8, Thm 5–6, §5"
    )
    schema = Schema(
        (
            *SELECTOR_PARAMS,
            Param(
                "public_threshold",
                INTEGER,
                "τ_pub: release a public partition iff its noisy count reaches it "
                "(Desfontaines et al. §5).",
                low=-(1 << 40),
                high=1 << 40,
                optional=True,
                example="1",
            ),
        )
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**4)},
        {
            "epsilon": mpq(1, 2),
            "delta": mpq(1, 100),
            "max_partitions_contributed": 2,
            "pre_threshold": 2,
        },
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.budget = Budget.from_params(self.params)
        try:
            self.noise = spending_noise(
                self.params["epsilon"] / self.budget.coordinates, self.budget.delta
            )
        except BadParameter as exc:
            raise BadParameter(
                f"{self.name}: the per-partition budget is out of range ({exc}); raise epsilon "
                "or delta, or lower max_partitions_contributed"
            ) from None
        self.k: int = self.noise.k
        self.pre_threshold: int = self.params["pre_threshold"]
        self.public_threshold: int | None = self.params["public_threshold"]
        self.saturation = 2 * self.k + self.pre_threshold + 1
        self.derived = {
            "coordinates": self.budget.coordinates,
            "k": self.k,
            "exp_epsilon_per_partition": self.noise.exp_epsilon,
            "delta_per_partition": self.noise.delta,
        }

    @property
    def per_partition(self) -> Guarantee:
        return Guarantee(self.noise.exp_epsilon, self.noise.delta, COUNT_SENSITIVITY_1)

    @property
    def guarantee(self) -> Guarantee:
        return self.budget.compose(self.per_partition)

    def _lowest_kept_noise(self, units: int) -> int | None:
        """The smallest X for which a partition with *units* units is released (None: never)."""
        if units < self.pre_threshold:
            return None
        return self.k + 1 - (units - self.pre_threshold + 1)

    def _keep_probability(self, units: int) -> Any:
        lowest = self._lowest_kept_noise(units)
        if lowest is None:
            return mpq(0)
        return 1 - mpq(self.noise.scaled_cdf(lowest - 1, 0), self.noise.d)

    def _output_pmf(self, units: int) -> Pmf:
        lowest = self._lowest_kept_noise(units)
        law: dict[int, Any] = {0: mpq(0)}
        for x, p in self.noise.pmf(0).items():
            out = units + x if lowest is not None and x >= lowest else 0
            law[out] = law.get(out, mpq(0)) + p
        return Pmf(law)

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None and self.public_threshold is None:
            raise NotSupported(f"{self.name} needs public_threshold to release public partitions")
        noise = self.noise.sample(np.zeros(unit_counts.size, dtype=np.int64), source)
        noisy = unit_counts.reshape(-1) + noise
        kept = (unit_counts.reshape(-1) >= self.pre_threshold) & (
            noisy - (self.pre_threshold - 1) >= self.k + 1
        )
        if public is not None:
            threshold = self.public_threshold
            assert threshold is not None  # checked above, before any draw
            kept = np.where(public.reshape(-1), noisy >= threshold, kept)
        shape = unit_counts.shape
        return Selection(kept.reshape(shape), np.where(kept, noisy, 0).reshape(shape))

    def _accuracy(self, beta: Any) -> Accuracy:
        """Noisy counts are within a of the truth w.p. ≥ 1 − β; partitions with more than
        ``threshold`` units are released w.p. ≥ 1 − β."""
        bound = ErrorBound(self.noise.accuracy(beta).per_query.a, beta)
        return Accuracy(
            bound,
            bound,
            threshold=max(self.kept_from(beta) - 1, 0),
            formula="k-TSGD error bound; smallest n with π(n) ≥ 1 − β",
        )
