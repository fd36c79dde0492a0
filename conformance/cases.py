"""What the contracts check: one :class:`Probe` per declared conformance case of a plugin.

A probe is the view of a mechanism instance that the statistical and exact contracts share,
whatever its kind: integer inputs, integer outputs drawn for an input, the exact law of those
outputs, the neighbouring inputs to compare and the guarantee that comparison must respect.

- :class:`SamplerProbe` (counting-query sampler): inputs are counts, outputs the noisy counts,
  neighbours are counts ``sensitivity`` apart, and the guarantee is the sampler's own.
- :class:`SelectorProbe` (partition selector): inputs are one partition's unit counts, outputs
  encode what it releases (0 dropped, 1 kept, or the noisy count), neighbours are unit counts one
  apart, and the guarantee is :attr:`~dpplug.PartitionSelector.per_partition` (the selection's
  guarantee is its composition over the partitions one unit touches, checked separately).
- :class:`ReleaserProbe` (histogram releaser): input k stands for a small dataset over the first
  two labels x₀, x₁ of the universe, outputs code the released counts of x₀ and x₁, neighbours
  are datasets one row apart under the releaser's relation, and the guarantee is its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.release_law import release_law
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee, Relation
from dpplug.histograms import DenseHistogram, SparseHistogram
from dpplug.kinds import CountingQuerySampler, HistogramReleaser, Kind, Mechanism, PartitionSelector
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource
from dpplug.registry import Entry


def instances(entry: Entry) -> Iterator[tuple[dict[str, Any], Mechanism]]:
    """(parameters, instance) for each of the plugin's ``conformance_cases``."""
    for case in entry.cls.conformance_cases:
        yield dict(case), entry.create(**case)


def describe_case(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "no parameters"


@dataclass(frozen=True)
class Probe(ABC):
    """One mechanism instance as the contracts see it (see the module docstring)."""

    mechanism: Mechanism
    params: dict[str, Any]

    @property
    def where(self) -> str:
        return describe_case(self.params)

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee neighbouring inputs' output laws must respect."""
        return self.mechanism.guarantee

    @property
    @abstractmethod
    def inputs(self) -> tuple[int, ...]:
        """Inputs sampled by the statistical contracts: both ends and an informative middle."""

    @property
    @abstractmethod
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Neighbouring inputs for the audit."""

    @abstractmethod
    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """*size* outputs for input *value* (integers, unless the mechanism is broken)."""

    @abstractmethod
    def law(self, value: int) -> Pmf:
        """The exact law of :meth:`draw`'s outputs (``NotSupported`` if there is none)."""

    def sample_size(self, settings: Settings) -> int:
        """How many outputs the statistical contracts draw per input."""
        return settings.samples

    def show_input(self, value: int) -> str:
        return str(value)

    def show_output(self, value: int) -> str:
        return str(value)


class SamplerProbe(Probe):
    """A counting-query sampler: counts in, noisy counts out."""

    @property
    def sampler(self) -> CountingQuerySampler:
        assert isinstance(self.mechanism, CountingQuerySampler)
        return self.mechanism

    @property
    def inputs(self) -> tuple[int, ...]:
        n = self.sampler.n
        return (-1, 0, 1) if n is None else tuple(sorted({0, n // 2, n}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Counts ``sensitivity`` apart at the low end, the middle and the high end."""
        n, step = self.sampler.n, self.sampler.guarantee.neighbouring.sensitivity
        if n is None:
            return ((0, step),)
        starts = sorted({0, max(0, n // 2 - step // 2), max(0, n - step)})
        return tuple((c, c + step) for c in starts if c + step <= n)

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        return np.asarray(self.sampler.sample(np.full(size, value, dtype=np.int64), source))

    def law(self, value: int) -> Pmf:
        return self.sampler.pmf(value)


class SelectorProbe(Probe):
    """A partition selector: one partition's unit count in, what it releases out."""

    @property
    def selector(self) -> PartitionSelector:
        assert isinstance(self.mechanism, PartitionSelector)
        return self.mechanism

    @property
    def guarantee(self) -> Guarantee:
        return self.selector.per_partition

    @property
    def inputs(self) -> tuple[int, ...]:
        selector = self.selector
        middle = next(
            n for n in range(selector.saturation + 1) if selector.keep_probability(n) >= mpq(1, 2)
        )
        return tuple(sorted({0, 1, middle, selector.saturation}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple((n, n + 1) for n in self.inputs if n < self.inputs[-1])

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        selection = self.selector.select(np.full(size, value, dtype=np.int64), source)
        if selection.noisy_counts is None:
            return np.asarray(selection.keep).astype(np.int64)
        return np.where(selection.keep, selection.noisy_counts, 0)

    def law(self, value: int) -> Pmf:
        return self.selector.output_pmf(value)


class ReleaserProbe(Probe):
    """A histogram releaser on datasets over the first two labels x₀, x₁ of its universe.

    Input k ∈ [0, n] is the dataset {x₀: k, x₁: n − k} for replace-one releasers (n rows, as
    Balcer–Vadhan's D; k and k + 1 are neighbours: one row moves from x₁ to x₀) and {x₀: k}
    for add-remove ones. An output is the pair of released counts (c̃_{x₀}, c̃_{x₁}), both in
    [0, n], coded as the integer c̃_{x₀}·(n + 1) + c̃_{x₁}. Releases are not vectorised, so the
    audit and accuracy contracts draw only :attr:`Settings.releases` of them per input.
    """

    @property
    def releaser(self) -> HistogramReleaser:
        assert isinstance(self.mechanism, HistogramReleaser)
        return self.mechanism

    @property
    def watched(self) -> tuple[Any, Any]:
        """The labels x₀ and x₁."""
        universe = self.releaser.universe
        if universe.size < 2:
            raise NotSupported(f"{self.where}: a universe of one label has no neighbours to probe")
        return universe.label(0), universe.label(1)

    @property
    def spot_labels(self) -> list[Any]:
        """Labels to read from every output, including those that cannot list their bins
        (compact histograms): the first four of the universe and its last."""
        universe = self.releaser.universe
        return [
            universe.label(i) for i in sorted({*range(min(4, universe.size)), universe.size - 1})
        ]

    def dataset(self, value: int) -> dict[Any, int]:
        """The dataset input *value* stands for, as a mapping label → count."""
        x0, x1 = self.watched
        if self.guarantee.neighbouring.relation is Relation.ADD_REMOVE:
            return {x0: value}
        return {x0: value, x1: self.releaser.n - value}

    @property
    def inputs(self) -> tuple[int, ...]:
        """The low end and the middle: the high end k = n is the low end with x₀ and x₁
        swapped, and each release costs a call."""
        return tuple(sorted({0, self.releaser.n // 2}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """k = 0 and 1: a row moves from x₁ into the empty bin x₀, so both released counts
        change and, in a sparse release, a bin may appear."""
        return ((0, 1),)

    def sample_size(self, settings: Settings) -> int:
        return settings.releases

    def releases(self, value: int, size: int, source: RandomSource) -> list[Any]:
        """*size* releases of the dataset of input *value*."""
        data = self.dataset(value)
        return [self.releaser.release(data, source) for _ in range(size)]

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        x0, x1 = self.watched
        codes = [self._code(r.count(x0), r.count(x1)) for r in self.releases(value, size, source)]
        return np.array(codes, dtype=np.int64)

    def law(self, value: int) -> Pmf:
        coded: dict[int, Any] = {}
        for released, probability in release_law(self.releaser, self.dataset(value)).items():
            counts = dict(released)
            code = self._code(counts.get(0, 0), counts.get(1, 0))
            coded[code] = coded.get(code, 0) + probability
        return Pmf(coded)

    def show_input(self, value: int) -> str:
        return str(self.dataset(value))

    def show_output(self, value: int) -> str:
        x0, x1 = self.watched
        c0, c1 = divmod(value, self.releaser.n + 1)
        return f"({x0!r}: {c0}, {x1!r}: {c1})"

    def _code(self, c0: int, c1: int) -> int:
        n = self.releaser.n
        for count in (c0, c1):
            if not 0 <= count <= n:
                raise ValueError(f"a released count {count} is outside [0, n = {n}]")
        return int(c0) * (n + 1) + int(c1)


def shown_counts(release: Any, labels: Iterable[Any]) -> dict[Any, int]:
    """The counts a release shows: every bin a dense or sparse histogram lists, and the count
    it reads for each of *labels* (the only ones of a compact histogram, whose labels are far
    too many to evaluate)."""
    shown = dict(release.items()) if isinstance(release, DenseHistogram | SparseHistogram) else {}
    shown.update({label: release.count(label) for label in labels})
    return shown


_PROBES: dict[Kind, type[Probe]] = {
    Kind.SAMPLER: SamplerProbe,
    Kind.PARTITION_SELECTOR: SelectorProbe,
    Kind.HISTOGRAM_RELEASER: ReleaserProbe,
}


def probes(entry: Entry) -> Iterator[Probe]:
    """A probe for each conformance case of the plugin."""
    for params, mechanism in instances(entry):
        probe = _PROBES.get(mechanism.kind)
        if probe is None:
            raise NotSupported(f"the contracts have no probe for a {mechanism.kind} yet")
        yield probe(mechanism, params)
