"""What the contracts check: one :class:`Probe` per declared conformance case of a plugin.

A probe is the view of a mechanism instance that the statistical and exact contracts share,
whatever its kind: integer inputs, integer outputs drawn for an input, the exact law of those
outputs, the neighbouring inputs to compare and the guarantee that comparison must respect.

- Counting-query sampler: inputs are counts, outputs the noisy counts, neighbours are counts
  ``sensitivity`` apart, and the guarantee is the sampler's own.
- Partition selector: inputs are one partition's unit counts, outputs encode what it releases
  (0 dropped, 1 kept, or the noisy count), neighbours are unit counts one apart, and the
  guarantee is :attr:`~dpplug.PartitionSelector.per_partition` (the selection's guarantee is its
  composition over the partitions one unit touches, checked separately).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee
from dpplug.kinds import CountingQuerySampler, Mechanism, PartitionSelector
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
class Probe:
    """One mechanism instance as the contracts see it (see the module docstring)."""

    mechanism: Mechanism
    params: dict[str, Any]

    @property
    def where(self) -> str:
        return describe_case(self.params)

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee neighbouring inputs' output laws must respect."""
        if isinstance(self.mechanism, PartitionSelector):
            return self.mechanism.per_partition
        return self.mechanism.guarantee

    @property
    def inputs(self) -> tuple[int, ...]:
        """Inputs sampled by the statistical contracts: both ends and an informative middle."""
        m = self.mechanism
        if isinstance(m, CountingQuerySampler):
            return (-1, 0, 1) if m.n is None else tuple(sorted({0, m.n // 2, m.n}))
        assert isinstance(m, PartitionSelector)
        middle = next(n for n in range(m.saturation + 1) if m.keep_probability(n) >= mpq(1, 2))
        return tuple(sorted({0, 1, middle, m.saturation}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Neighbouring inputs for the audit: at the low end, the middle and the high end."""
        m = self.mechanism
        if isinstance(m, CountingQuerySampler):
            step = m.guarantee.neighbouring.sensitivity
            if m.n is None:
                return ((0, step),)
            starts = sorted({0, max(0, m.n // 2 - step // 2), max(0, m.n - step)})
            return tuple((c, c + step) for c in starts if c + step <= m.n)
        return tuple((n, n + 1) for n in self.inputs if n < self.inputs[-1])

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """*size* outputs for input *value* (integers, unless the mechanism is broken)."""
        m = self.mechanism
        if isinstance(m, CountingQuerySampler):
            return np.asarray(m.sample(np.full(size, value, dtype=np.int64), source))
        assert isinstance(m, PartitionSelector)
        selection = m.select(np.full(size, value, dtype=np.int64), source)
        if selection.noisy_counts is None:
            return np.asarray(selection.keep).astype(np.int64)
        return np.where(selection.keep, selection.noisy_counts, 0)

    def law(self, value: int) -> Pmf:
        """The exact law of :meth:`draw`'s outputs (``NotSupported`` if there is none)."""
        m = self.mechanism
        if isinstance(m, CountingQuerySampler):
            return m.pmf(value)
        assert isinstance(m, PartitionSelector)
        return m.output_pmf(value)


def probes(entry: Entry) -> Iterator[Probe]:
    """A probe for each conformance case of a sampler or selector."""
    for params, mechanism in instances(entry):
        if not isinstance(mechanism, CountingQuerySampler | PartitionSelector):
            raise NotSupported(f"the contracts have no probe for a {entry.kind} yet")
        yield Probe(mechanism, params)
