"""The kinds of mechanism: the core contract every plugin implements (see DESIGN.md).

- :class:`CountingQuerySampler`: Balcer–Vadhan Def. 4.1–4.3, a deterministic M(c, u) for a true
  count c ∈ [0, n] and randomness u ∈ [1, d], with its scaled CDF and exact pmf.
- :class:`PartitionSelector`: Desfontaines et al., the exact keep probability π(n) and a
  vectorised ``select``.
- :class:`HistogramReleaser`: Balcer–Vadhan §5–8, a histogram released from counts.

Each kind is an abstract base class whose public methods validate their input and then call the
plugin's ``_``-prefixed implementation, so every plugin, built-in or third-party, rejects bad input
before it draws any randomness. New kinds subclass :class:`Mechanism` and get a hookspec.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.data import integer_array, integer_scalar
from dpplug.errors import BadData, NotSupported, PluginFault
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.params import Param, Schema
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, default_source
from dpplug.universe import Universe

#: Count bound of samplers that accept any integer (noise addition, no clamping).
UNBOUNDED_COUNT = 1 << 62

_BETA = Param(
    "beta",
    "rational",
    "Failure probability of the accuracy bound.",
    low=0,
    high=1,
    low_open=True,
    high_open=True,
    example="0.05",
)


class Kind(StrEnum):
    """The kinds of mechanism the registry knows, one hookspec each."""

    SAMPLER = "sampler"
    HISTOGRAM_RELEASER = "histogram-releaser"
    PARTITION_SELECTOR = "partition-selector"


class Mechanism(ABC):
    """What every mechanism declares: name, parameters, guarantee, accuracy, provenance.

    Subclasses set the class attributes and implement :attr:`guarantee` and :meth:`_accuracy`.
    ``__init__`` validates the keyword parameters through :attr:`schema`; the exact values are in
    :attr:`params` and whatever the mechanism derives from them (rounded ε, truncation, …) in
    :attr:`derived`.
    """

    name: ClassVar[str]
    kind: ClassVar[Kind]
    schema: ClassVar[Schema]
    summary: ClassVar[str]
    #: The paper and algorithm implemented, e.g. "Balcer & Vadhan 2018, Alg. 4.8 (GeoSample)".
    reference: ClassVar[str]
    #: True if ``sample``/``select``/``release`` use a number of draws fixed by the parameters
    #: and the input size, never by the data or by chance.
    strict_time: ClassVar[bool] = False
    #: Small parameterisations on which exact checks are feasible (conformance).
    conformance_cases: ClassVar[tuple[Mapping[str, Any], ...]] = ()

    def __init__(self, **params: object) -> None:
        self.params: dict[str, Any] = self.schema.validate(params, self.name)
        self.derived: dict[str, Any] = {}

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The privacy guarantee actually achieved with these parameters."""

    def accuracy(self, beta: object) -> Accuracy:
        """The (a, β) accuracy this mechanism guarantees for failure probability *beta*."""
        return self._accuracy(_BETA.coerce(beta))

    @abstractmethod
    def _accuracy(self, beta: Any) -> Accuracy: ...

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items() if v is not None)
        return f"dpplug.create({self.name!r}, {args})"


class CountingQuerySampler(Mechanism):
    """A counting-query sampler: M(c, u) for c ∈ [0, n], u ∈ [1, d] (Balcer–Vadhan Def. 4.1–4.3).

    ``epsilon`` is the sampler's own guarantee for one counting query of sensitivity 1. Bounded
    samplers have a finite ``n`` and ``d``. Unbounded ones (noise addition on any integer) set
    ``n = None``; samplers without a finite randomness size set ``d = None`` and offer only
    :meth:`sample` and :meth:`pmf`.
    """

    kind = Kind.SAMPLER
    n: int | None
    d: int | None

    @property
    def count_bounds(self) -> tuple[int, int]:
        """The true counts this sampler accepts."""
        if self.n is None:
            return (-UNBOUNDED_COUNT, UNBOUNDED_COUNT)
        return (0, self.n)

    def _count(self, count: object) -> int:
        return integer_scalar(count, *self.count_bounds, what=f"{self.name} count")

    def _randomness_size(self) -> int:
        if self.d is None:
            raise NotSupported(
                f"{self.name} has no finite randomness size d, so M(c, u) and its scaled CDF do "
                f"not exist; use sample() and pmf(), or a bounded sampler such as geosample"
            )
        return self.d

    def __call__(self, count: object, u: object) -> int:
        """M(count, u): the output for true count *count* and randomness *u* ∈ [1, d]."""
        d = self._randomness_size()
        c = self._count(count)
        return self._output(c, integer_scalar(u, 1, d, what="randomness u"))

    def scaled_cdf(self, z: object, count: object = 0) -> int:
        """F(count, z) = d·Pr[M(count, U) ≤ z], an exact integer; non-decreasing in z."""
        self._randomness_size()
        c = self._count(count)
        return self._scaled_cdf(integer_scalar(z, -UNBOUNDED_COUNT, UNBOUNDED_COUNT, "z"), c)

    def pmf(self, count: object) -> Pmf:
        """The exact law of M(count, U) (output → rational probability)."""
        return self._pmf(self._count(count))

    def sample(self, counts: object, source: RandomSource | None = None) -> npt.NDArray[np.int64]:
        """Noisy counts for an integer array of true counts (same shape), drawn from *source*.

        *source* defaults to the OS CSPRNG. Counts are validated before anything is drawn.
        """
        array = integer_array(counts, *self.count_bounds, what=f"{self.name} counts")
        rng = default_source(source)
        flat = array.reshape(-1)
        return self._sample(flat, rng).reshape(array.shape)

    def _output(self, count: int, u: int) -> int:
        """M(count, u); samplers with a finite d must implement it."""
        raise PluginFault(f"{self.name} declares d = {self.d} but does not implement _output")

    def _scaled_cdf(self, z: int, count: int) -> int:
        """F(count, z); samplers with a finite d must implement it."""
        raise PluginFault(f"{self.name} declares d = {self.d} but does not implement _scaled_cdf")

    @abstractmethod
    def _pmf(self, count: int) -> Pmf: ...

    def _pmf_from_scaled_cdf(self, count: int) -> Pmf:
        """The exact law on [0, n] from differences of the scaled CDF (bounded samplers)."""
        d, n = self._randomness_size(), self.count_bounds[1]
        cdf = [self._scaled_cdf(z, count) for z in range(-1, n + 1)]
        return Pmf({z: mpq(cdf[z + 1] - cdf[z], d) for z in range(n + 1)})

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        """Exact reference path: M(c, U(d)) element by element (expected time, via U(d))."""
        d = self._randomness_size()
        return np.fromiter(
            (self._output(int(c), source.uniform(d)) for c in counts),
            dtype=np.int64,
            count=counts.size,
        )


@dataclass(frozen=True)
class Selection:
    """The result of a partition selector: which partitions are kept, and noisy counts if any.

    ``noisy_counts`` is ``None`` for selectors that only decide; thresholding selectors release
    the noisy count of each kept partition (entries of dropped partitions are 0).
    """

    keep: npt.NDArray[np.bool_]
    noisy_counts: npt.NDArray[np.int64] | None = None


class PartitionSelector(Mechanism):
    """A partition selector (Desfontaines et al. 2020): keeps a partition with n privacy units
    with probability π(n), independently of the other partitions.

    π(0) = 0: partitions absent from the data are never released. The guarantee is stated for
    adding or removing one privacy unit who contributes to at most ℓ₀ partitions (or replacing
    one, for bounded DP); :attr:`per_partition` is the guarantee of a single partition's release
    when its unit count changes by one, which the guarantee composes over the partitions one unit
    can touch. Exact checks compare :meth:`output_pmf` of neighbouring unit counts, up to
    :attr:`saturation`, from which on neighbouring laws repeat.
    """

    kind = Kind.PARTITION_SELECTOR
    #: Unit count from which the pair (output law at n, at n + 1) no longer changes.
    saturation: int

    @property
    @abstractmethod
    def per_partition(self) -> Guarantee:
        """(ε, δ) of one partition's release under a change of its unit count by one."""

    def keep_probability(self, units: object) -> Any:
        """π(units), the exact rational probability of keeping a partition with *units* units."""
        return self._keep_probability(integer_scalar(units, 0, UNBOUNDED_COUNT, "units"))

    def kept_from(self, beta: Any) -> int:
        """The smallest unit count kept with probability at least 1 − β (exact)."""
        return next(n for n in range(self.saturation + 1) if self.keep_probability(n) >= 1 - beta)

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        """One partition's keep decision from its unit count, with the law of :meth:`select`,
        for callers that see partitions one at a time (PipelineDP's per-partition filter)."""
        rng = default_source(source)

        def decide(units: int) -> bool:
            return bool(self.select(np.array([units], dtype=np.int64), rng).keep[0])

        return decide

    def output_pmf(self, units: object) -> Pmf:
        """The exact law of what one partition releases: 0 when dropped, 1 when kept (selectors
        that only decide), or the released noisy count (thresholding selectors, always ≥ 1)."""
        return self._output_pmf(integer_scalar(units, 0, UNBOUNDED_COUNT, "units"))

    def select(
        self,
        unit_counts: object,
        source: RandomSource | None = None,
        public: object = None,
    ) -> Selection:
        """Keep decisions for an array of per-partition unit counts (same shape).

        *public* (a boolean array of the same shape, for selectors that support public
        partitions) marks partitions known in advance; they may have 0 units.
        """
        array = integer_array(unit_counts, 0, UNBOUNDED_COUNT, what="unit counts")
        mask = None
        if public is not None:
            try:
                mask = np.asarray(public)
            except ValueError as exc:  # ragged nesting
                raise BadData(f"public must be a rectangular boolean array ({exc})") from None
            if mask.dtype != np.bool_ or mask.shape != array.shape:
                raise BadData(
                    f"public must be a boolean array of shape {array.shape}, got "
                    f"{mask.dtype} of shape {mask.shape}"
                )
        return self._select(array, default_source(source), mask)

    def _output_pmf(self, units: int) -> Pmf:
        keep = self._keep_probability(units)
        return Pmf({0: 1 - keep, 1: keep})

    @abstractmethod
    def _keep_probability(self, units: int) -> Any: ...

    @abstractmethod
    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection: ...


@dataclass(frozen=True)
class TrueCounts:
    """A releaser's validated input: the nonempty bins as strictly increasing universe indices,
    their true counts, and the number of rows (at most the public n)."""

    indices: tuple[int, ...]
    counts: npt.NDArray[np.int64]
    rows: int


class HistogramReleaser(Mechanism):
    """A histogram releaser (Balcer–Vadhan §5–8): a private histogram of a dataset of at most n
    rows over a public universe X (:mod:`dpplug.universe`).

    The data is either rows (an iterable of labels) or a mapping label → count. Every label must
    be in the universe and the counts must sum to at most n; :meth:`release` checks both before
    anything is drawn. Releasers that the paper parameterises by a counting-query algorithm take
    a ``sampler`` parameter naming any registered :class:`CountingQuerySampler`, resolved in the
    registry the releaser was created from (*plugins*). Released collections are in canonical
    label order (:mod:`dpplug.histograms`).
    """

    kind = Kind.HISTOGRAM_RELEASER
    universe: Universe
    #: The public bound on the number of rows (Balcer–Vadhan's dataset size n).
    n: int
    #: Whether a release may show a label whose true count is 0. Dense and compact outputs show
    #: every label, and KeepHeavy-style sparse releases sample empty bins; a releaser of the
    #: nonempty bins only (the stability histogram, Balcer–Vadhan 000 Alg. 5.4) sets False,
    #: and the conformance suite checks that it never releases an empty bin.
    releases_empty_bins: ClassVar[bool] = True

    def __init__(self, *, plugins: Any = None, **params: object) -> None:
        super().__init__(**params)
        self.plugins = plugins

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        """The private histogram of *data* (rows of labels, or a mapping label → count)."""
        counts = self.true_counts(data)
        return self._release(counts, default_source(source))

    def true_counts(self, data: object) -> TrueCounts:
        """*data* validated against the universe and n; :class:`BadData` saying what to change."""
        if isinstance(data, Mapping):
            by_index: dict[int, int] = {}
            for label, count in data.items():
                index = self.universe.index(label)
                value = integer_scalar(count, 0, self.n, f"the count of {label!r}")
                if value:
                    by_index[index] = by_index.get(index, 0) + value
        elif isinstance(data, str | bytes) or not isinstance(data, Iterable):
            raise BadData(
                f"{self.name} takes rows (a list of labels) or a mapping label → count, got "
                f"{type(data).__name__}"
            )
        else:
            by_index = {}
            for label in data:
                index = self.universe.index(label)
                by_index[index] = by_index.get(index, 0) + 1
        rows = sum(by_index.values())
        if rows > self.n:
            raise BadData(
                f"the data has {rows} rows but {self.name} was built for at most n = {self.n}; "
                f"build it with a larger n (n is public) or bound each dataset's size first"
            )
        indices = tuple(sorted(by_index))
        counts = np.fromiter((by_index[i] for i in indices), dtype=np.int64, count=len(indices))
        return TrueCounts(indices, counts, rows)

    @abstractmethod
    def _release(self, counts: TrueCounts, source: RandomSource) -> Any: ...
