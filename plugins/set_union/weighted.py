"""The weighted Gaussian set union (Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin, ICML 2020,
Alg. "Weighted Gaussian") and DP-SIPS (Swanberg, Desfontaines, Haney, arXiv 2301.01998: rounds of
it, released labels removed between rounds, an increasing budget), on the exact discrete
Gaussian, calibrated and certified in :mod:`.calibration`.

A release: every unit is bounded to Δ₀ labels by a uniform choice (a partial Fisher–Yates
shuffle of its labels in canonical order, one U(k) draw each); then in each round, a unit whose
t bounded labels are not yet released gives each w_t = ⌊G/√t⌋ grid units; each label's total h
gets N_ℤ(0, s_r²) noise and is kept iff h + Z ≥ T_r (:class:`~dpplug.kinds.set_union_selector
.thresholded_gaussian.GaussianKeeps`, one served draw per round over the labels in canonical
order). Units and labels are processed in canonical order, so the release depends on the data
only, not on how the caller ordered it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.exact import smallest_at_least
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds.set_union_selector import SetUnionSelector, UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.declared import GaussianRounds
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps, tail_lower
from dpplug.param_types import INTEGER, RATIONAL
from dpplug.params import Param, Schema
from dpplug.plugins.set_union.calibration import Calibration, calibrate
from dpplug.plugins.set_union.common import COMMON_PARAMS, one_draw
from dpplug.program import run
from dpplug.randomness import RandomSource
from dpplug.structures import ExactStructure, ServedDraws


class WeightedRounds(SetUnionSelector):
    """Rounds of the weighted Gaussian (see the module docstring); one round is Gopi et al.'s
    weighted Gaussian, several are DP-SIPS."""

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.max_partitions = self.params["max_partitions_contributed"]
        self.calibration: Calibration = calibrate(
            self.params["epsilon"],
            self.params["delta"],
            self.max_partitions,
            self._rounds(),
            self._ratio(),
            self.params["replace_one"],
        )
        first = self.calibration.rounds[0]
        self.derived.update(
            grid=first.grid,
            noise_sd=[float(r.sigma2) ** 0.5 / r.grid for r in self.calibration.rounds],
            thresholds=[r.threshold / r.grid for r in self.calibration.rounds],
            mu=float(self.calibration.mu),
        )

    def _rounds(self) -> int:
        return 1

    def _ratio(self) -> Any:
        return mpq(1)

    @property
    def guarantee(self) -> Guarantee:
        relation = Relation.REPLACE_ONE if self.params["replace_one"] else Relation.ADD_REMOVE
        return Guarantee(
            self.calibration.exp_epsilon,
            self.calibration.delta,
            Neighbouring(relation, max_partitions=self.max_partitions),
        )

    def exact_structure(self) -> ExactStructure:
        return ServedDraws()

    def declared_release(self) -> GaussianRounds:
        return GaussianRounds(self.calibration.rounds)

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        released: set[Any] = set()
        for certificate in self.calibration.rounds:
            weights = certificate.weights
            totals: dict[Any, int] = {}
            for labels in sets:
                remaining = [label for label in labels if label not in released]
                if remaining:
                    w = weights[len(remaining) - 1]
                    for label in remaining:
                        totals[label] = totals.get(label, 0) + w
            if not totals:
                break
            candidates = canonical_labels(totals)
            draw = GaussianKeeps(
                certificate.sigma2,
                tuple(certificate.threshold - totals[label] for label in candidates),
            )
            keeps = run(partial(one_draw, draw), source)
            released.update(label for label, keep in zip(candidates, keeps, strict=True) if keep)
        return canonical_labels(released)

    def round_weight(self, round_index: int, items: int) -> int:
        return self.calibration.rounds[round_index].weights[items - 1]

    def round_keep(self, round_index: int, total: int, source: RandomSource) -> bool:
        certificate = self.calibration.rounds[round_index]
        draw = GaussianKeeps(certificate.sigma2, (certificate.threshold - total,))
        return run(partial(one_draw, draw), source)[0]

    def _units_needed(self, beta: Any, items: int) -> int:
        first = self.calibration.rounds[0]
        w = first.weights[items - 1]
        most = first.threshold // w + 64 * (int(first.sigma2) // (w * w) + 1) + 1

        def kept(n: int) -> bool:
            return bool(tail_lower(first.sigma2, first.threshold - n * w) >= 1 - beta)

        if not kept(most):
            raise BadParameter(f"β = {float(beta):.3g} is too small for this mechanism's bound")
        return smallest_at_least(lambda n: kept(n), 1, most, True)

    def _accuracy(self, beta: Any) -> Accuracy:
        """A label that more than ``threshold`` units hold, each with that one label, is
        released with probability ≥ 1 − β (first round, a rigorous lower bound)."""
        bound = ErrorBound(0, beta)
        needed = self._units_needed(beta, 1)
        return Accuracy(
            bound,
            bound,
            threshold=needed - 1,
            formula="fewest single-label units keeping a label w.p. ≥ 1 − β (membership only)",
        )


class WeightedGaussian(WeightedRounds):
    name = "weighted-gaussian"
    summary = "Weighted Gaussian set union (Gopi et al.), exact discrete Gaussian, ℓ₂ weights."
    reference = (
        "Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin 2020 (weighted Gaussian); "
        "Canonne, Kamath, Steinke 2020 (discrete Gaussian); Dong, Roth, Su 2022"
    )
    schema = Schema(COMMON_PARAMS)
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 20), "max_partitions_contributed": 2},
        {"epsilon": 2, "delta": mpq(1, 10), "max_partitions_contributed": 3, "replace_one": True},
    )


class DpSips(WeightedRounds):
    name = "dp-sips"
    summary = "DP-SIPS: rounds of the weighted Gaussian, released labels removed, rising budget."
    reference = (
        "Swanberg, Desfontaines, Haney 2023 (DP-SIPS, arXiv 2301.01998); Gopi et al. 2020; "
        "Dong, Roth, Su 2022 (adaptive GDP composition)"
    )
    schema = Schema(
        (
            *COMMON_PARAMS,
            Param("rounds", INTEGER, "How many rounds.", low=1, high=8, default=3),
            Param(
                "budget_ratio",
                RATIONAL,
                "Each round's share of the budget (μ² and δ) over the previous round's.",
                low=mpq(1, 4),
                high=8,
                default=2,
            ),
        )
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 20), "max_partitions_contributed": 2, "rounds": 2},
    )

    @classmethod
    def pipeline_rounds(cls, params: Mapping[str, Any]) -> int:
        return int(params["rounds"])

    def _rounds(self) -> int:
        rounds: int = self.params["rounds"]
        return rounds

    def _ratio(self) -> Any:
        return self.params["budget_ratio"]
