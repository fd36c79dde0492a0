"""The histogram-releaser kind (Balcer & Vadhan, "Differential Privacy on Finite Computers",
§5–8): a private histogram of a dataset of at most n rows over a public universe X
(:mod:`dpplug.universe`), released dense, sparse or compact
(:mod:`dpplug.kinds.histogram_releaser.outputs`).

Plugins subclass :class:`HistogramReleaser`, implement :meth:`~HistogramReleaser._release` and
register the class through :func:`register_histogram_releasers`. Guarantees are stated for
replacing one row (n public, Balcer–Vadhan's relation) or adding or removing one. In OpenDP a
releaser is a measurement on label counts (after ``then_count_by``) or on label vectors; in
PipelineDP the engine counts rows per label and the release runs once, centrally, on the
nonempty bins. ``docs/kinds.md`` is the reference.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from dpplug.data import integer_scalar
from dpplug.errors import BadData, BadParameter
from dpplug.guarantee import LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import CentralPlan, DataForm, Kind, LabelDistance, PipelineRole
from dpplug.kinds.histogram_releaser.outputs import CompactHistogram
from dpplug.kinds.histogram_releaser.release_law import Law, release_law
from dpplug.mechanism import Mechanism
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface
from dpplug.universe import INTEGER_TYPES as _INTEGER_TYPES
from dpplug.universe import WORD, BulkIndices, Universe

Counts = npt.NDArray[np.int64]
Words = npt.NDArray[np.uint64]
Positions = npt.NDArray[np.intp]


@dataclass(frozen=True)
class TrueCounts:
    """A releaser's validated input: the nonempty bins as strictly increasing universe indices,
    their true counts, and the number of rows (at most the public n)."""

    indices: tuple[int, ...]
    counts: npt.NDArray[np.int64]
    rows: int


class HistogramReleaser(Mechanism):
    """A histogram releaser over a public universe with a public bound n on the rows.

    The data is either rows (an iterable of labels) or a mapping label → count. Every label must
    be in the universe and the counts must sum to at most n; :meth:`release` checks both before
    anything is drawn. Releasers that the paper parameterises by a counting-query algorithm take
    a ``sampler`` parameter naming any registered sampler, resolved in the registry the releaser
    was created from. Released collections are in canonical label order.

    Required of a plugin:

    - ``universe`` (a :class:`~dpplug.universe.Universe`) and ``n`` (instance attributes), and
      the :class:`Mechanism` declarations;
    - :meth:`_release` (true counts, source) → a :class:`~dpplug.DenseHistogram`,
      :class:`~dpplug.SparseHistogram` or :class:`~dpplug.CompactHistogram`;
    - optionally :meth:`~dpplug.Mechanism.exact_structure`, the structure through which
      :meth:`release_law` computes its exact law on tiny cases
      (:class:`~dpplug.structures.ServedDraws` when every draw goes through the source's
      ``serve``: a program run by :func:`dpplug.program.run`, noise asked by
      :func:`dpplug.program.noise`; ``CompactField`` for Alg. 8.2), so that the conformance
      suite can verify it exactly;
    - ``releases_empty_bins = False`` if it never shows a label whose true count is 0.
    """

    universe: Universe
    #: The public bound on the number of rows (Balcer–Vadhan's dataset size n).
    n: int
    #: Whether a release may show a label whose true count is 0. Dense and compact outputs show
    #: every label, and KeepHeavy-style sparse releases sample empty bins; a releaser of the
    #: nonempty bins only (the stability histogram) sets False, and the conformance suite checks
    #: that it never releases an empty bin.
    releases_empty_bins: ClassVar[bool] = True

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        """The private histogram of *data* (rows of labels, or a mapping label → count)."""
        counts = self.true_counts(data)
        return self._release(counts, default_source(source))

    def release_law(self, data: Mapping[Any, int]) -> Law:
        """The exact law of :meth:`release` on *data*, for tiny cases (see
        :mod:`dpplug.kinds.histogram_releaser.release_law`; :class:`~dpplug.errors.NotSupported`
        when it cannot be enumerated)."""
        self.true_counts(data)
        return release_law(self, data)

    def true_counts(self, data: object) -> TrueCounts:
        """*data* validated against the universe and n; :class:`BadData` saying what to change.

        Labels and counts are checked in bulk (:meth:`Universe.indices`, one numpy pass over
        the counts); when anything is wrong, the item-by-item check finds the first bad item
        and raises its message, so both routes refuse the same data with the same words."""
        if isinstance(data, Mapping):
            labels, values = list(data.keys()), list(data.values())
        elif isinstance(data, str | bytes) or not isinstance(data, Iterable):
            raise BadData(
                f"{self.name} takes rows (a list of labels) or a mapping label → count, got "
                f"{type(data).__name__}"
            )
        else:
            labels, values = _distinct_rows(data)
        indices = self.universe.indices(labels)
        counts = _bulk_counts(values, self.n) if indices is not None else None
        if indices is None or counts is None:
            indices, counts = self._one_by_one(labels, values)
        return self._summed(indices, counts)

    def _one_by_one(self, labels: list[Any], values: list[Any]) -> tuple[list[int], Counts]:
        """Each label and count checked in turn: raises :class:`BadData` for the first bad one."""
        indices, counts = [], []
        for label, count in zip(labels, values, strict=True):
            indices.append(self.universe.index(label))
            counts.append(integer_scalar(count, 0, self.n, f"the count of {label!r}"))
        return indices, np.array(counts, dtype=np.int64)

    def _summed(self, indices: BulkIndices, counts: Counts) -> TrueCounts:
        """The nonempty bins in index order (a label given twice, e.g. as 1 and numpy's 1, has
        its counts added), and the check that the rows are at most n. The indices below 2^64
        are sorted and added up in numpy, the others (and inputs of few labels) in Python."""
        if len(counts) and len(counts) * self.n >= 1 << 63:  # int64 sums could overflow
            rows = sum(counts.tolist())
        else:
            rows = int(counts.sum())
        if rows > self.n:
            raise BadData(
                f"the data has {rows} rows but {self.name} was built for at most n = {self.n}; "
                f"build it with a larger n (n is public) or bound each dataset's size first"
            )
        if len(indices) <= _FEW:
            return TrueCounts(*_summed_in_python(_as_list(indices), counts), rows)
        (words, where), large = _split_words(indices)
        order, summed = _summed_words(words, counts[where])
        if large is None:
            return TrueCounts(tuple(order.tolist()), summed, rows)
        # Every index below 2^64 comes before every other.
        rest, rest_counts = _summed_in_python(large[0], counts[large[1]])
        return TrueCounts(tuple(order.tolist()) + rest, np.concatenate([summed, rest_counts]), rows)

    @abstractmethod
    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        """The histogram for validated true counts, drawn from *source*."""


#: Inputs of at most this many distinct labels are summed in Python (numpy's per-call cost
#: dominates there: an exact release law replays thousands of small releases).
_FEW = 64


def _as_list(indices: BulkIndices) -> list[int]:
    return indices if isinstance(indices, list) else indices.tolist()


def _split_words(
    indices: BulkIndices,
) -> tuple[tuple[Words, Positions], tuple[list[int], Positions] | None]:
    """*indices* as (those below 2^64 as ``uint64``, their positions) and, when some are not,
    (those as ints, their positions)."""
    if not isinstance(indices, list):
        return (indices.astype(np.uint64), np.arange(len(indices))), None
    try:
        return (np.array(indices, dtype=np.uint64), np.arange(len(indices))), None
    except OverflowError:  # some reach 2^64
        small = [i for i, index in enumerate(indices) if index < WORD]
        large = [i for i, index in enumerate(indices) if index >= WORD]
        return (
            (np.array([indices[i] for i in small], dtype=np.uint64), np.array(small, np.intp)),
            ([indices[i] for i in large], np.array(large, dtype=np.intp)),
        )


def _summed_words(words: Words, counts: Counts) -> tuple[Words, Counts]:
    """The distinct *words* in increasing order with their counts added up, empty bins left
    out."""
    ranks = np.argsort(words)
    words, counts = words[ranks], counts[ranks]
    if words.size:
        starts = np.flatnonzero(np.diff(words, prepend=words[:1] + np.uint64(1)))
        words, counts = words[starts], np.add.reduceat(counts, starts)
    kept = counts > 0
    return words[kept], counts[kept]


def _summed_in_python(indices: list[int], counts: Counts) -> tuple[tuple[int, ...], Counts]:
    """:func:`_summed_words` in Python, for indices of any size."""
    by_index: dict[int, int] = {}
    for index, count in zip(indices, counts.tolist(), strict=True):
        if count:
            by_index[index] = by_index.get(index, 0) + count
    ordered = sorted(by_index)
    return tuple(ordered), np.array([by_index[i] for i in ordered], dtype=np.int64)


def _distinct_rows(rows: Iterable[Any]) -> tuple[list[Any], list[int]]:
    """Rows as (distinct labels, how often each occurs). Labels are counted with a Counter only
    when their types cannot compare equal across types (1 == True == 1.0 would merge a bad
    label into a good one); otherwise every row stays its own entry, with count 1."""
    if isinstance(rows, np.ndarray) and rows.ndim == 1 and rows.dtype.kind in "iu":
        distinct, times = np.unique(rows, return_counts=True)
        return distinct.tolist(), times.tolist()
    listed = list(rows)
    kinds = set(map(type, listed))
    if len(kinds) == 1 and kinds <= {int, str, bytes}:
        tally = Counter(listed)
        return list(tally), list(tally.values())
    return listed, [1] * len(listed)


def _bulk_counts(values: list[Any], high: int) -> Counts | None:
    """*values* as int64 counts in [0, high] in one numpy pass, or ``None`` if any is not (then
    the item-by-item check names it)."""
    if not set(map(type, values)) <= _INTEGER_TYPES:
        return None
    if len(values) <= _FEW:
        small = [int(v) for v in values]
        if any(not 0 <= v <= high for v in small):
            return None
        return np.array(small, dtype=np.int64)
    try:
        counts = np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        return None
    if counts.size and (counts.min() < 0 or counts.max() > high):
        return None
    return counts


def neighbours(counts: tuple[int, ...], relation: Relation, n: int) -> list[tuple[int, ...]]:
    """The count vectors one row from *counts* under *relation* (replace-one: a row moves to
    another label; add-remove: a row is added, keeping at most n rows) that sort after it, so
    that each neighbouring pair is listed once."""
    found = []
    for j in range(len(counts)):
        if relation is Relation.ADD_REMOVE:
            if sum(counts) < n:
                found.append(tuple(c + (i == j) for i, c in enumerate(counts)))
            continue
        for i in range(len(counts)):
            if i != j and counts[i] > 0:
                found.append(tuple(c - (k == i) + (k == j) for k, c in enumerate(counts)))
    return [other for other in found if other > counts]


@hookspec
def register_histogram_releasers(register: Register) -> None:
    """Register histogram releasers: ``register(cls)`` for each subclass of
    :class:`dpplug.HistogramReleaser`."""


class HistogramReleaserKind(Kind):
    """The histogram-releaser kind (see the module docstring)."""

    name = "histogram-releaser"
    hookspec = staticmethod(register_histogram_releasers)
    base = HistogramReleaser
    relations = (Relation.REPLACE_ONE, Relation.ADD_REMOVE)
    data_form = DataForm.LABELS
    pipeline_role = PipelineRole.CENTRAL_RELEASE
    summary = "a histogram of labelled rows over a public universe"
    surfaces = (
        Surface(
            "release",
            "the histogram of rows or of a mapping label → count, and everything it carries",
            (
                Dimension.LAW,
                Dimension.RELATIONS,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "release_law": "the release surface's law (core, from the declared structure)",
        "true_counts": "validation, before anything is drawn (bad-input)",
        "universe": "declared (declaration)",
        "n": "declared (declaration)",
        "releases_empty_bins": "part of the release surface (hygiene)",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        if not isinstance(getattr(mechanism, "universe", None), Universe):
            problems.append("universe must be a dpplug Universe")
        n = getattr(mechanism, "n", None)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            problems.append("n (the public bound on rows) must be an int ≥ 1")
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """l₁ rows apart, by group privacy over l₁ steps of one row added or removed.

        The Balcer–Vadhan releasers are proved for replacing one row of a dataset of n rows,
        which changes two counts by one; adding or removing a row changes one count by one, a
        sub-case of that analysis (each proof bounds the effect of the changed counts and of
        bins entering or leaving the support), so the replace-one (ε, δ) also holds for one row
        added or removed while the dataset has at most n rows (larger data is refused before
        any draw). Removals first keep every intermediate dataset within n rows.
        """
        if not isinstance(distance, LabelDistance):
            raise TypeError(f"a releaser's distance is a LabelDistance, got {distance!r}")
        return mechanism.guarantee.group(distance.l1)

    def check_labels(self, mechanism: Mechanism) -> None:
        universe = _releaser(mechanism).universe
        if not isinstance(universe.label(0), str):
            raise BadParameter(
                f"frameworks' labels are str, but {mechanism.name} was built over the universe "
                f"{universe.spec}; declare a text:L or labels:[…] universe of strings"
            )

    def apply(self, mechanism: Mechanism, data: Any, source: RandomSource | None = None) -> Any:
        """{label: count} in canonical order, or the compact histogram itself (a function
        object: its labels are far too many to list)."""
        histogram = _releaser(mechanism).release(data, source)
        return histogram if isinstance(histogram, CompactHistogram) else histogram.to_dict()

    def central_plan(self, cls: type[Mechanism]) -> CentralPlan:
        """The nonempty bins gathered as (label, count) pairs and released once (the same plan
        for every releaser)."""
        return CentralPlan(per_bin=_bin_pair, combine=_extend, empty=[], finish=_release)


def _bin_pair(_public: None, label: Any, count: int) -> list[tuple[Any, int]]:
    return [(label, count)]


def _extend(a: list[tuple[Any, int]], b: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """Extends the longer list with the shorter, in place: the engine owns both (each per-bin
    list is fresh), and concatenating into a new sequence would make the fold quadratic in the
    number of bins."""
    if len(a) < len(b):
        a, b = b, a
    a.extend(b)
    return a


def _release(mechanism: Mechanism, _public: None, pairs: list[tuple[Any, int]]) -> Any:
    return _releaser(mechanism).release(dict(pairs))


def _releaser(mechanism: Mechanism) -> HistogramReleaser:
    assert isinstance(mechanism, HistogramReleaser), mechanism
    return mechanism


HISTOGRAM_RELEASER = HistogramReleaserKind()
HistogramReleaser.kind = HISTOGRAM_RELEASER
