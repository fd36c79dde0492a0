"""Contract 7, hygiene: outputs of the declared type, shape and range; randomness only from the
RandomSource (same seed, same output; something drawn); partitions absent from the data never
released; and, for plugins that claim strict running time, a number of draws that does not depend
on the data.

Histogram releasers are released :data:`RELEASES` times on each of a few small datasets (empty,
one label, two labels, a random mix, and rows instead of a mapping). Every release must be a
dpplug histogram over the releaser's universe (:mod:`dpplug.histograms`): a dense one with an
integer count for every label, a sparse one whose bins are in canonical (universe index) order
and name labels of the universe, or a compact one; every count it shows (for a compact one, a
handful of labels) is an integer in [0, n]; and a releaser that declares
``releases_empty_bins = False`` never shows a label whose true count is 0.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from dpplug.conformance.cases import ReleaserProbe, probes, shown_counts
from dpplug.conformance.release_law import bins
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.histograms import CompactHistogram, DenseHistogram, SparseHistogram
from dpplug.kinds import (
    CountingQuerySampler,
    HistogramReleaser,
    Mechanism,
    PartitionSelector,
    Selection,
)
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "hygiene"
_SHAPE = (8, 8)


def _inputs(mechanism: Mechanism, seed: int) -> dict[str, npt.NDArray[np.int64]]:
    if isinstance(mechanism, CountingQuerySampler):
        low, high = mechanism.count_bounds if mechanism.n is not None else (-5, 5)
    else:
        assert isinstance(mechanism, PartitionSelector)
        low, high = 0, mechanism.saturation + 5
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    return {
        "low": np.full(_SHAPE, low, dtype=np.int64),
        "high": np.full(_SHAPE, high, dtype=np.int64),
        "mixed": rng.integers(low, high, size=_SHAPE, endpoint=True, dtype=np.int64),
    }


def _sampler_output(
    sampler: CountingQuerySampler, counts: npt.NDArray[np.int64], out: Any
) -> list[str]:
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu":
        return [f"outputs are {getattr(out, 'dtype', type(out))}, not integers"]
    problems = [] if out.shape == counts.shape else [f"output shape {out.shape} for {_SHAPE}"]
    if sampler.n is not None and (out.min() < 0 or out.max() > sampler.n):
        problems.append(f"outputs outside [0, {sampler.n}]")
    return problems


def _selector_output(
    _selector: PartitionSelector, counts: npt.NDArray[np.int64], out: Any
) -> list[str]:
    if not isinstance(out, Selection) or np.asarray(out.keep).dtype != np.bool_:
        return ["select() must return a Selection with a boolean keep mask"]
    problems = [] if out.keep.shape == counts.shape else [f"keep shape {out.keep.shape}"]
    if np.any(out.keep[counts == 0]):
        problems.append("a partition with 0 units was released")
    if out.noisy_counts is not None and (
        out.noisy_counts.dtype.kind not in "iu" or out.noisy_counts.shape != counts.shape
    ):
        problems.append("noisy counts must be an integer array of the input's shape")
    return problems


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, Selection) and isinstance(b, Selection):
        same_counts = (a.noisy_counts is None and b.noisy_counts is None) or (
            a.noisy_counts is not None
            and b.noisy_counts is not None
            and np.array_equal(a.noisy_counts, b.noisy_counts)
        )
        return bool(np.array_equal(a.keep, b.keep)) and same_counts
    return bool(np.array_equal(a, b))


_NOT_REPRODUCIBLE = (
    "the same seeded source gave different outputs: randomness comes from somewhere other than "
    "the RandomSource"
)


def _problems(mechanism: Mechanism, strict: bool, seed: int) -> list[str]:
    run: Callable[[npt.NDArray[np.int64], SeededSource], Any]
    check: Callable[[npt.NDArray[np.int64], Any], list[str]]
    if isinstance(mechanism, CountingQuerySampler):
        run, check = mechanism.sample, partial(_sampler_output, mechanism)
    else:
        assert isinstance(mechanism, PartitionSelector)
        run, check = mechanism.select, partial(_selector_output, mechanism)
    problems: list[str] = []
    draws: dict[str, int] = {}
    for label, counts in _inputs(mechanism, seed).items():
        source = SeededSource(seed)
        out = run(counts, source)
        draws[label] = source.draws
        problems += check(counts, out)
        if source.draws == 0:
            problems.append("drew nothing from the RandomSource")
        if not _equal(out, run(counts, SeededSource(seed))):
            problems.append(_NOT_REPRODUCIBLE)
    return problems + _strict_problems(strict, draws)


def _strict_problems(strict: bool, draws: dict[str, int]) -> list[str]:
    if strict and len(set(draws.values())) > 1:
        return [f"claims strict running time but the number of draws depends on the data: {draws}"]
    return []


#: Releases per dataset: enough to see a data-dependent order or an empty bin by chance.
RELEASES = 32
_HISTOGRAMS = (DenseHistogram, SparseHistogram, CompactHistogram)


def _datasets(probe: ReleaserProbe, seed: int) -> dict[str, Any]:
    """Small datasets of the releaser's universe: mappings label → count, and rows."""
    universe, n = probe.releaser.universe, probe.releaser.n
    labels = [universe.label(i) for i in range(min(4, universe.size))]
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    mixed = rng.multinomial(rng.integers(1, n, endpoint=True), [1 / len(labels)] * len(labels))
    return {
        "empty": {},
        "one label": {labels[0]: n},
        "two labels": probe.dataset(n // 2),
        "mixed": {label: int(c) for label, c in zip(labels, mixed, strict=True) if c},
        "rows": [labels[i % len(labels)] for i in range(n)],
    }


def _content(release: Any) -> object:
    """What two releases must share to be the same release."""
    if isinstance(release, CompactHistogram):
        return release.modulus, release.coefficients
    return bins(release)


def _is_integer(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _structure_problems(releaser: HistogramReleaser, release: Any) -> list[str]:
    """Type, universe, dense shape and sparse order; empty if the counts can be read."""
    if not isinstance(release, _HISTOGRAMS):
        return [f"release() returned a {type(release).__name__}, not a dpplug histogram"]
    if release.universe != releaser.universe:
        return [f"released over {release.universe.spec}, not {releaser.universe.spec}"]
    size = releaser.universe.size
    if isinstance(release, DenseHistogram):
        counts = release.counts
        if not isinstance(counts, np.ndarray) or counts.dtype.kind not in "iu":
            return ["a dense histogram's counts must be an integer array"]
        return [] if counts.shape == (size,) else [f"dense counts of shape {counts.shape}"]
    if isinstance(release, SparseHistogram):
        indices = list(release.indices)
        if not all(_is_integer(i) and 0 <= i < size for i in indices):
            return [f"released indices {indices} name labels outside the universe"]
        if any(a >= b for a, b in pairwise(indices)):
            return [f"bins released in the order {indices}, not in canonical (index) order"]
    return []


def _count_problems(probe: ReleaserProbe, release: Any, present: set[Any]) -> list[str]:
    """Every shown count an integer in [0, n]; no empty bin (a label not *present* in the
    data) from a releaser that declares it releases nonempty bins only."""
    releaser = probe.releaser
    shown = shown_counts(release, [*probe.spot_labels, *present])
    bad = {x: c for x, c in shown.items() if not (_is_integer(c) and 0 <= c <= releaser.n)}
    if bad:
        return [f"released counts {bad} are not integers in [0, n = {releaser.n}]"]
    if releaser.releases_empty_bins:
        return []
    if not isinstance(release, SparseHistogram):
        kind = type(release).__name__
        return [f"declares releases_empty_bins = False but returns a {kind}, showing every label"]
    empty = [label for label in release.labels if label not in present]
    return [f"released {empty}, whose true counts are 0"] if empty else []


def _releaser_problems(probe: ReleaserProbe, strict: bool, seed: int) -> list[str]:
    """The hygiene problems of :data:`RELEASES` releases of each small dataset; a strict-time
    releaser must draw as often on every dataset of n rows."""
    releaser = probe.releaser
    problems: list[str] = []
    draws: dict[str, int] = {}
    for name, data in _datasets(probe, seed).items():
        counts = releaser.true_counts(data)
        present = {releaser.universe.label(i) for i in counts.indices}
        source = SeededSource(seed)
        releases = [releaser.release(data, source) for _ in range(RELEASES)]
        for release in releases:
            found = _structure_problems(releaser, release)
            found = found or _count_problems(probe, release, present)
            problems += [f"data {data}: {problem}" for problem in found]
        if problems:
            return problems
        if counts.rows == releaser.n:
            draws[name] = source.draws
        if counts.rows and source.draws == 0:
            problems.append(f"data {data}: drew nothing from the RandomSource")
        again = SeededSource(seed)
        if [_content(r) for r in releases] != [
            _content(releaser.release(data, again)) for _ in range(RELEASES)
        ]:
            problems.append(f"data {data}: {_NOT_REPRODUCIBLE}")
    return problems + _strict_problems(strict, draws)


def check(entry: Entry, settings: Settings) -> ContractResult:
    for probe in probes(entry):
        if isinstance(probe, ReleaserProbe):
            problems = _releaser_problems(probe, entry.cls.strict_time, settings.seed)
        else:
            problems = _problems(probe.mechanism, entry.cls.strict_time, settings.seed)
        if problems:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
    strict = "data-independent draw count, " if entry.cls.strict_time else ""
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"outputs of the declared type, shape and range, {strict}reproducible from the "
        "RandomSource",
    )
