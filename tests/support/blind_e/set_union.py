# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken set-union selectors (each class docstring's first line states its flaw)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.base import _key, unit_sets
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import run
from dpplug.randomness import RandomSource, default_source


class StickyReleased(WeightedGaussian):
    """Flaw: the set of released labels lives on the instance and is never reset between calls.

    The round loop's ``released`` set was hoisted to an attribute; a later select() starts
    with every label an earlier call released, skips their weights and returns them again, so a
    release shows labels that no unit of its data holds.
    """

    name = "rte-wg-sticky-released"
    summary = "Weighted Gaussian set union whose released set persists across calls."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._released: set[Any] = set()

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        released = self._released
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


class GroupbyPairs(WeightedGaussian):
    """Flaw: (unit, label) pairs are grouped with itertools.groupby, which only joins adjacent pairs.

    A fast path for pair input: a unit whose pairs are not contiguous becomes several units,
    each bounded to Δ₀ and each giving its labels full weight, so one real unit can contribute
    far beyond the calibrated ℓ₂ weight. Mappings and contiguous pairs are handled correctly.
    """

    name = "rte-wg-groupby-pairs"
    summary = "Weighted Gaussian set union with a groupby fast path for pairs."

    def select(self, data: object, source: RandomSource | None = None) -> list[Any]:
        if isinstance(data, Mapping | str | bytes) or not isinstance(data, Iterable):
            return super().select(data, source)  # the base class validates (and refuses)
        pairs = list(data)
        unit_sets(pairs)  # validate every pair first (BadData before any draw)
        units: list[tuple[Any, tuple[Any, ...]]] = []
        for _, group in itertools.groupby(pairs, key=lambda pair: pair[0]):
            units.extend(unit_sets(list(group)))
        units.sort(key=lambda unit: _key(unit[0]))  # canonical unit order, as unit_sets gives
        return self._select(tuple(units), default_source(source))
