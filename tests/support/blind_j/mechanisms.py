"""Red team J's missed plugins (see the package docstring), written by the red team against the
public base classes and kept here as they were, with typed signatures."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

import dpplug
from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.kinds.set_union_selector import canonical_labels, unit_sets
from dpplug.plugins.anonymized.pava import pava_blocks, rounded_runs
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import Noise
from dpplug.randomness import default_source


def _fit(values: list[int]) -> Iterable[tuple[int, int]]:
    """PAVA (weights 1) and rounding of noisy values, as the built-in sorted histogram does."""
    return rounded_runs(pava_blocks(list(values), [1] * len(values)))


def _released(self: SortedHistogram, runs: Iterable[tuple[int, int]]) -> AnonymizedHistogram:
    counts: dict[int, int] = {}
    for value, length in runs:
        if value:
            counts[value] = counts.get(value, 0) + length
    return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


class PavaTrueWeights(SortedHistogram):
    """FLAW: PAVA weighted by 1 + the TRUE sorted count ("trust big counts more"): the
    post-processing reads the data. {6} against {6, 1} (length 2): ratio ≥ 3.32 > e."""

    name = "rtj-anon-pava-true-weights"
    summary = "Sorted histogram with count-weighted isotonic regression."

    def program(self, prevalences: Prevalences) -> Generator[Noise, Any, AnonymizedHistogram]:
        true = self.padded(prevalences)
        noisy = yield Noise(self.sampler, true.tolist())
        weights = [1 + int(t) for t in true]
        sums = [w * y for w, y in zip(weights, noisy, strict=True)]
        return _released(self, rounded_runs(pava_blocks(sums, weights)))


class NoiseFloor(SortedHistogram):
    """FLAW: a noise floor estimated from the padding (ranks at or past the TRUE number of
    labels K) subtracted before PAVA: which entries are averaged depends on the data. {2}
    against {2, 1} (length 3): ratio ≥ 303 > e."""

    name = "rtj-anon-noise-floor"
    summary = "Sorted histogram debiased by the noise floor of its padding."

    def program(self, prevalences: Prevalences) -> Generator[Noise, Any, AnonymizedHistogram]:
        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        tail = noisy[prevalences.counts :]
        floor = (2 * sum(tail) + len(tail)) // (2 * len(tail)) if tail else 0
        return _released(self, _fit([y - floor for y in noisy]))


class TrimToLabels(SortedHistogram):
    """FLAW: the fitted release cut to the data's true number of labels K ("padding zeros are
    not labels"): the released support size reads K. Caught by the audit alone on first
    contact; by the exact check now."""

    name = "rtj-anon-trim-to-labels"
    summary = "Sorted histogram that never releases more labels than the data has."

    def program(self, prevalences: Prevalences) -> Generator[Noise, Any, AnonymizedHistogram]:
        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        values: list[int] = []
        for value, length in _fit(noisy):
            values += [value] * length
        return _released(self, ((v, 1) for v in values[: prevalences.counts]))


class DupPairs(WeightedGaussian):
    """FLAW: select() on (unit, label) pairs groups them in lists, not sets: a pair listed twice
    gives its label 2·w₂ = 362 > G = 256 of weight (the unit's ℓ₂ norm above its bound)."""

    name = "rtj-su-dup-pairs"
    summary = "Weighted Gaussian set union with a fast path for (unit, label) pairs."

    def select(self, data: object, source: dpplug.RandomSource | None = None) -> list[Any]:
        if (
            isinstance(data, list)
            and data
            and all(isinstance(p, tuple) and len(p) == 2 for p in data)
        ):
            unit_sets(data)  # validation only (it raises on bad units or labels)
            grouped: dict[Any, list[Any]] = {}
            for unit, label in data:
                grouped.setdefault(unit, []).append(label)
            units = [(u, tuple(canonical_labels(v))) for u, v in grouped.items()]
            units.sort(key=lambda p: repr(p[0]))
            return self._select(units, default_source(source))
        return super().select(data, source)


class RepeatPadded(SortedHistogram):
    """CONTROL: the padded vector built by ``np.repeat``, the same vector as the built-in's."""

    name = "rtj-ok-sorted"
    summary = "Sorted histogram (padded vector built with numpy)."

    def padded(self, prevalences: Prevalences) -> npt.NDArray[np.int64]:
        if prevalences.counts > self.length:
            return super().padded(prevalences)  # the refusal
        pairs = list(reversed(prevalences.pairs))
        values = np.repeat([r for r, _ in pairs], [phi for _, phi in pairs]).astype(np.int64)
        return np.concatenate([values, np.zeros(self.length - values.size, dtype=np.int64)])
