"""Known-broken set-union selectors, each registered as a plugin the way a third party would, and
each required to fail a named conformance contract (see test_set_union_conformance.py). Each
flaw is small: one grid unit of weight, a factor Δ₀ in δ, one label too many, a budget split
left out."""

from __future__ import annotations

import dataclasses
from typing import Any

from gmpy2 import isqrt, mpz

import dpplug
from dpplug.guarantee import Guarantee, Neighbouring, Relation
from dpplug.kinds.set_union_selector.thresholded_gaussian import RoundCertificate
from dpplug.plugins.set_union import DpSips, PolicyLaplace, WeightedGaussian
from dpplug.plugins.set_union.calibration import calibrate
from dpplug.plugins.set_union.policy_laplace import descend
from dpplug.randomness import RandomSource


class _NearestWeights(RoundCertificate):
    """w_t = G/√t rounded to the nearest integer rather than down."""

    @property
    def weights(self) -> tuple[int, ...]:
        # ⌊G/√t + ½⌋ = ⌊(2G/√t + 1)/2⌋ = (⌊2G/√t⌋ + 1) // 2, exactly in integers.
        return tuple(
            (int(isqrt(mpz(4 * self.grid * self.grid // t))) + 1) // 2
            for t in range(1, self.items + 1)
        )


class NearestWeightsGaussian(WeightedGaussian):
    """Rounds the ℓ₂ weights G/√t to the nearest grid unit (G = 256, t = 3: 148, not 147), so a
    unit of three labels has weight norm 1.0013 > 1; it declares the weights it uses."""

    name = "zoo-nearest-weights-gaussian"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        rounds = tuple(
            _NearestWeights(**{f.name: getattr(r, f.name) for f in dataclasses.fields(r)})
            for r in self.calibration.rounds
        )
        self.calibration = dataclasses.replace(self.calibration, rounds=rounds)


class PerLabelDeltaGaussian(WeightedGaussian):
    """Calibrates its threshold and noise for δ per label (Δ₀·δ in all), and declares δ."""

    name = "zoo-per-label-delta-gaussian"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        p = self.params
        self.calibration = calibrate(
            p["epsilon"],
            p["delta"] * self.max_partitions,
            self.max_partitions,
            1,
            1,
            p["replace_one"],
        )

    @property
    def guarantee(self) -> Guarantee:
        relation = Relation.REPLACE_ONE if self.params["replace_one"] else Relation.ADD_REMOVE
        return Guarantee(
            self.calibration.exp_epsilon,
            self.params["delta"],
            Neighbouring(relation, max_partitions=self.max_partitions),
        )


class EveryRoundFullBudgetSips(DpSips):
    """DP-SIPS whose every round is calibrated to the whole (ε, δ), declared as one round's."""

    name = "zoo-every-round-full-budget-sips"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        p = self.params
        one = calibrate(p["epsilon"], p["delta"], self.max_partitions, 1, 1, p["replace_one"])
        self.calibration = dataclasses.replace(one, rounds=one.rounds * p["rounds"])


class KeepsOneMorePolicy(PolicyLaplace):
    """Its contribution bound keeps Δ₀ + 1 of a unit's labels (an off-by-one in the shuffle)."""

    name = "zoo-keeps-one-more-policy"

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        self.max_partitions += 1
        try:
            return super().bound(labels, source)
        finally:
            self.max_partitions -= 1


class UnsplitPolicy(PolicyLaplace):
    """Each unit gives every one of its labels weight 1 (G units) rather than splitting G over
    them: ℓ1 sensitivity Δ₀·G for noise calibrated to G."""

    name = "zoo-unsplit-policy"

    def _totals(self, sets: list[tuple[Any, ...]]) -> dict[Any, int]:
        totals: dict[Any, int] = {}
        for labels in sets:
            for label in labels:
                descend(totals, (label,), self.policy.grid, self.policy.cutoff)
        return totals


#: Each broken selector, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    NearestWeightsGaussian: (
        "exact-privacy",
        "3 labels 148/256: a weight vector of ℓ₂ norm 1.00134",
    ),
    PerLabelDeltaGaussian: ("exact-privacy", "is below the composition of its 1 rounds"),
    EveryRoundFullBudgetSips: ("exact-privacy", "is below the composition of its 2 rounds"),
    KeepsOneMorePolicy: ("exact-privacy", "it does not do what it declares: select("),
    UnsplitPolicy: ("exact-privacy", "it does not do what it declares: select("),
}


@dpplug.hookimpl
def register_set_union_selectors(register: Any) -> None:
    for mechanism in ZOO:
        register(mechanism)
