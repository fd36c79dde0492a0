"""Set-union selectors (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

from functools import partial
from typing import Any

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.thresholded_geometric import GeometricKeeps
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.policy_laplace import PolicyLaplace
from dpplug.program import run
from dpplug.randomness import RandomSource


class FisherYatesOffByOne(PolicyLaplace):
    """FLAW: the bounding's partial Fisher–Yates draws j from [i, len − 2] (U(len − i − 1)),
    so the last label (canonical order) of a unit over Δ₀ labels is never among the kept ones
    unless fewer remain: not a uniform choice."""

    name = "rtg-su-fy-off-by-one"
    summary = "policy-laplace with its own partial Fisher–Yates bounding."

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        if len(labels) <= self.max_partitions:
            return labels
        pool = list(labels)
        for i in range(self.max_partitions):
            j = i + source.uniform(len(pool) - i - 1) - 1
            pool[i], pool[j] = pool[j], pool[i]
        return tuple(canonical_labels(pool[: self.max_partitions]))


class UnboundedCandidates(PolicyLaplace):
    """FLAW: the candidates are the union of the units' labels before bounding, so a label
    that bounding dropped still gets a keep draw at total 0 (Pr = α^T/(1 + α)); a unit with
    many labels then releases one with probability growing with its item count, past δ."""

    name = "rtg-su-unbounded-candidates"
    summary = "policy-laplace, candidates from the units' labels (totals after bounding)."

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        totals = self._totals(sets)
        candidates = canonical_labels({label for _, labels in units for label in labels})
        if not candidates:
            return []
        draw = GeometricKeeps(
            self.policy.alpha,
            tuple(self.policy.threshold - totals.get(label, 0) for label in candidates),
        )
        keeps = run(partial(one_draw, draw), source)
        return [label for label, keep in zip(candidates, keeps, strict=True) if keep]


class ThresholdMinusTwo(PolicyLaplace):
    """FLAW: the accuracy threshold is units_needed − 2 (an off-by-one: "more than threshold"
    read as "at least"), so it claims labels of needed − 1 single-label units are kept w.p.
    ≥ 1 − β, which is false."""

    name = "rtg-su-threshold-minus-two"
    summary = "policy-laplace with the accuracy threshold at units_needed − 2."

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(0, beta)
        needed = self._units_needed(beta, 1)
        return Accuracy(bound, bound, threshold=max(needed - 2, 0), formula="units_needed − 2")


class SelectionSampling(PolicyLaplace):
    """CONTROL: the bounding by selection sampling (Knuth's Algorithm S: label i kept with
    probability (Δ₀ − kept)/(labels left)), a uniform Δ₀-subset like the built-in's shuffle."""

    name = "rtg-ok-su-selection-sampling"
    summary = "policy-laplace, bounding by selection sampling (Algorithm S)."

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        if len(labels) <= self.max_partitions:
            return labels
        kept: list[Any] = []
        left = len(labels)
        for label in labels:
            need = self.max_partitions - len(kept)
            if need == 0:
                break
            if source.uniform(left) <= need:
                kept.append(label)
            left -= 1
        return tuple(canonical_labels(kept))


from gmpy2 import isqrt, mpq  # noqa: E402

from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps  # noqa: E402
from dpplug.plugins.set_union.weighted import WeightedGaussian  # noqa: E402


class RoundKeepStd(WeightedGaussian):
    """FLAW: the distributed route's round_keep passes σ (⌊√σ²⌋) where GaussianKeeps takes the
    variance σ², so a Spark/Beam run thresholds with far less noise than select() and its
    calibration: a label one unit short of the threshold is almost never kept, at the
    threshold half the time (δ ≈ 1/2)."""

    name = "rtg-su-round-keep-std"
    summary = "weighted-gaussian with its own distributed keep step."

    def round_keep(self, round_index: int, total: int, source: RandomSource) -> bool:
        certificate = self.calibration.rounds[round_index]
        sigma = mpq(int(isqrt(int(certificate.sigma2))))  # the noise's scale
        draw = GaussianKeeps(sigma, (certificate.threshold - total,))
        return run(partial(one_draw, draw), source)[0]


#: Units holding more labels than this are bounded by a cheap window (no shuffle of a huge pool).
BIG_UNIT = 256


class BigUnitWindow(PolicyLaplace):
    """FLAW: units of more than 256 labels are bounded to a uniformly placed window of Δ₀
    consecutive labels (canonical order) instead of a uniform Δ₀-subset: two labels that are not
    neighbours in canonical order are never kept together, so the release law is not the
    declared one (and labels deep in a big unit's list are kept less often than Δ₀/t)."""

    name = "rtg-su-big-unit-window"
    summary = "policy-laplace; big units bounded by a random window (fast)."

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        if len(labels) <= max(BIG_UNIT, self.max_partitions):
            return super().bound(labels, source)
        start = source.uniform(len(labels) - self.max_partitions + 1) - 1
        return tuple(labels[start : start + self.max_partitions])
