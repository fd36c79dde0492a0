"""Sparse linear queries and the data they are asked of (Blum & Roth, "Fast Private Data Release
Algorithms for Sparse Queries", RANDOM 2013, §2), and the one interface every query releaser
answers through.

- **Labels.** A row is one label. With a declared universe (:mod:`dpplug.universe`) a label
  must be in it and the canonical order is the universe's index order. Without one (Blum &
  Roth's infinite universe: all byte strings, say) a label is a ``str``, ``bytes`` or ``int``
  (not ``bool``), in the canonical order ints < byte strings < strings, each by length then value
  (shortlex), which depends on no data.
- **Data** (:class:`LabelCounts`): rows (an iterable of labels) or a mapping label → count, with
  at most the public n rows (:func:`label_counts`).
- **Queries** (:class:`SparseQuery`): a mapping label → weight Q(x) ∈ [0, 1]. Weights are put on
  the grid 1/W (W = the workload's ``grid``) by rounding to the nearest grid point, halves up:
  w_x = ⌊W·Q(x) + 1/2⌋, computed exactly (a float is read as the exact dyadic rational it is).
  Each weight moves by at most 1/(2W), so the rounded query's answer differs from the given
  one's by at most 1/(2W); the release answers, and declares its accuracy for, the rounded
  query. A query is m-sparse when at most m labels have a positive rounded weight. Its answer is
  Q(D) = (1/n)·Σ_rows Q(row) with the public n, so n·W·Q(D) = Σ_x w_x·c_x is an integer (the
  *scaled* answer) and every noisy quantity is integer noise on it.
- **Workload** (:class:`Workload`): the k queries, of sparsity m on the grid W, that a guarantee
  and its accuracy cover.
- **Answers** (:class:`QueryAnswers`): what :meth:`dpplug.QueryReleaser.start` returns. An
  interactive release is a :class:`QuerySession` (it holds the data, answers at most k queries
  and never exposes what it holds); a non-interactive one (a
  :class:`~dpplug.SparseProjection`) answers from what it released. Both offer
  ``answer(query)`` and ``answers(queries)``, exact ``Fraction`` s in [0, 1], with the
  guarantee and the accuracy of the release.

Accuracy is declared in grid units: ``accuracy.simultaneous.a = a`` means every answer is within
a/(n·W) of the truth (:attr:`QueryAnswers.alpha`).
"""

from __future__ import annotations

import numbers
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.data import integer_scalar
from dpplug.errors import BadData, NotSupported
from dpplug.exact import as_rational
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.universe import Universe

Label = Any  # str, bytes or int; or whatever the declared universe holds
Key = Any  # a canonical sort key


def canonical_label(label: object, universe: Universe | None) -> tuple[Key, Label]:
    """(sort key, the label in canonical form), or :class:`BadData` saying what to change."""
    if universe is not None:
        index = universe.index(label)
        return index, universe.label(index)
    if isinstance(label, numbers.Integral) and not isinstance(label, bool | np.bool_):
        return (0, int(label)), int(label)
    if isinstance(label, bytes):
        return (1, len(label), label), label
    if isinstance(label, str):
        return (2, len(label), label), label
    raise BadData(
        f"label {label!r} ({type(label).__name__}) is not a str, bytes or int label; convert the "
        f"labels to one of those types, or declare a universe"
    )


@dataclass(frozen=True)
class LabelCounts:
    """Validated data: the labels present, in canonical order, their counts, and the number of
    rows (at most the public n)."""

    labels: tuple[Label, ...]
    counts: tuple[int, ...]
    rows: int
    _by_label: dict[Label, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_label", dict(zip(self.labels, self.counts, strict=True)))

    def count(self, label: Label) -> int:
        """The count of a canonical *label* (0 if absent)."""
        return self._by_label.get(label, 0)


def label_counts(data: object, n: int, universe: Universe | None, what: str) -> LabelCounts:
    """*data* (rows of labels, or a mapping label → count) validated: labels canonical (and in
    *universe* if one is declared), counts non-negative integers, at most *n* rows in all."""
    found: dict[Label, tuple[Key, int]] = {}
    rows = 0

    def add(label: object, count: int) -> None:
        nonlocal rows
        key, canonical = canonical_label(label, universe)
        found[canonical] = (key, found.get(canonical, (key, 0))[1] + count)
        rows += count

    if isinstance(data, Mapping):
        for label, count in data.items():
            add(label, integer_scalar(count, 0, n, f"the count of {label!r}"))
    elif isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise BadData(
            f"{what} takes rows (a list of labels) or a mapping label → count, got "
            f"{type(data).__name__}"
        )
    else:
        for label in data:
            add(label, 1)
            if rows > n:
                break  # refused below, without reading the rest
    if rows > n:
        raise BadData(
            f"the data has more than n = {n} rows ({rows} read) but {what} was built for at "
            f"most n = {n}; build it with a larger n (n is public) or bound each dataset's "
            f"size first"
        )
    ordered = sorted((key, label, count) for label, (key, count) in found.items() if count)
    return LabelCounts(
        tuple(label for _, label, _ in ordered), tuple(count for *_, count in ordered), rows
    )


@dataclass(frozen=True)
class Workload:
    """The queries a guarantee covers: at most ``max_queries`` (k) queries, each of sparsity at
    most ``sparsity`` (m), with weights on the grid 1/``grid`` (W)."""

    max_queries: int
    sparsity: int
    grid: int


@dataclass(frozen=True)
class SparseQuery:
    """A validated m-sparse query: its support in canonical order and the integer weights
    w_x ∈ [1, W], so that Q(x) = w_x/W."""

    labels: tuple[Label, ...]
    weights: tuple[int, ...]
    grid: int

    def scaled_answer(self, counts: LabelCounts) -> int:
        """n·W·Q(D) = Σ_x w_x·c_x, the exact answer in grid units."""
        return sum(w * counts.count(x) for x, w in zip(self.labels, self.weights, strict=True))

    def as_dict(self) -> dict[Label, Fraction]:
        """{label: Q(x)} over the support, exactly."""
        return {x: Fraction(w, self.grid) for x, w in zip(self.labels, self.weights, strict=True)}


def sparse_query(query: object, workload: Workload, universe: Universe | None) -> SparseQuery:
    """*query* (a mapping label → weight in [0, 1], or a :class:`SparseQuery` on the same grid)
    validated, rounded onto the grid (see the module docstring) and checked to be m-sparse."""
    grid, sparsity = workload.grid, workload.sparsity
    if isinstance(query, SparseQuery):
        if query.grid != grid:
            raise BadData(f"the query is on the grid 1/{query.grid}, not 1/{grid}; pass a mapping")
        query = query.as_dict()
    if not isinstance(query, Mapping):
        raise BadData(
            f"a query is a mapping label → weight in [0, 1], got {type(query).__name__}; e.g. "
            f"{{'a': 1, 'b': 0.5}}"
        )
    support: dict[Label, tuple[Key, int]] = {}
    for label, weight in query.items():
        key, canonical = canonical_label(label, universe)
        try:
            exact = as_rational(weight)
        except (TypeError, ValueError) as exc:
            raise BadData(
                f"the weight of {label!r} must be a number in [0, 1] ({exc}), got {weight!r}"
            ) from None
        if not 0 <= exact <= 1:
            raise BadData(f"the weight of {label!r} must be in [0, 1], got {weight!r}")
        if canonical in support:
            raise BadData(f"label {label!r} appears twice in the query (as {canonical!r})")
        w = int((exact * grid + mpq(1, 2)) // 1)
        if w:
            support[canonical] = (key, w)
            if len(support) > sparsity:
                raise BadData(
                    f"the query has more than {sparsity} labels with a positive weight, but the "
                    f"workload is {sparsity}-sparse; split it into {sparsity}-sparse queries or "
                    f"build the releaser with a larger sparsity"
                )
    ordered = sorted((key, label, w) for label, (key, w) in support.items())
    return SparseQuery(tuple(label for _, label, _ in ordered), tuple(w for *_, w in ordered), grid)


@dataclass(frozen=True)
class Declaration:
    """What a query release declares: the mechanism (its name, validated parameters and text),
    the public n and universe, the workload, the guarantee and the accuracy."""

    name: str
    params: Mapping[str, Any]
    text: str
    n: int
    universe: Universe | None
    workload: Workload
    guarantee: Guarantee
    accuracy: Accuracy


class QueryAnswers(ABC):
    """Answers to m-sparse queries from one release (see the module docstring).

    ``answer(query)`` and ``answers(queries)`` validate every query before anything else, and
    return exact ``Fraction`` s in [0, 1]. :attr:`declaration` carries the guarantee and the
    accuracy: every answer is within :attr:`alpha` of the truth, simultaneously over the k
    queries of the workload, except with probability β.
    """

    declaration: Declaration
    #: Whether the answers are computed from data the object holds (a session).
    interactive: bool

    @property
    def guarantee(self) -> Guarantee:
        return self.declaration.guarantee

    @property
    def accuracy(self) -> Accuracy:
        return self.declaration.accuracy

    @property
    def workload(self) -> Workload:
        return self.declaration.workload

    @property
    def scale(self) -> int:
        """n·W: an answer A corresponds to A·n·W grid units (the unit of the accuracy's a)."""
        return self.declaration.n * self.declaration.workload.grid

    @property
    def alpha(self) -> Fraction:
        """The declared simultaneous error bound α = a/(n·W) at the accuracy's β."""
        return Fraction(self.accuracy.simultaneous.a, self.scale)

    def query(self, query: object) -> SparseQuery:
        """*query* validated and rounded for this release (:func:`sparse_query`)."""
        return sparse_query(query, self.workload, self.declaration.universe)

    def answer(self, query: object) -> Fraction:
        """The answer to one query."""
        return self.answers([query])[0]

    @abstractmethod
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        """The answers to several queries, in order (all validated first)."""


class QuerySession(QueryAnswers):
    """An interactive release: it holds the data and answers at most k queries, each computed
    when it arrives. The data and every private quantity are held privately: nothing public
    depends on them except the answers, the session cannot be pickled, and its text shows the
    declaration only. A query past the k-th, or any query the mechanism refuses, raises a dpplug
    error before anything is drawn. Answering is atomic: a lock held from the check against k
    to the last answer of a batch makes concurrent callers (threads sharing a session, an OpenDP
    Queryable called from several threads) answer one batch at a time, so the k-answer bound,
    which is a privacy bound, holds under any interleaving.

    Subclasses implement :meth:`_answer` (a validated query → its released answer in grid
    units, in [0, n·W]) and may refuse queries in :meth:`_check` (e.g. a spent update budget).
    """

    interactive = True

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        #: How many queries have been answered.
        self.answered = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """How many more queries the guarantee covers."""
        return self.declaration.workload.max_queries - self.answered

    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        """The answers in order. Every query is validated, and the batch checked against the
        k queries of the workload, before any is answered; a refusal in the middle of a batch
        (see :meth:`_check`) raises with the answers released before it in its ``answers``
        attribute."""
        parsed = [self.query(q) for q in queries]
        with self._lock:
            if len(parsed) > self.remaining:
                k = self.declaration.workload.max_queries
                raise NotSupported(
                    f"this session's guarantee covers k = {k} queries and {self.answered} were "
                    f"answered; {len(parsed)} more would exceed it (start a new release, with "
                    f"its own budget, for more queries)"
                )
            released: list[Fraction] = []
            for query in parsed:
                try:
                    self._check()
                except NotSupported as refusal:
                    refusal.answers = released  # type: ignore[attr-defined]
                    raise
                released.append(Fraction(self._answer(query), self.scale))
                self.answered += 1
            return released

    def _check(self) -> None:
        """Refuse (NotSupported, nothing drawn) the next query; nothing to refuse by default."""

    @abstractmethod
    def _answer(self, query: SparseQuery) -> int:
        """The released answer to a validated query, in grid units in [0, n·W]."""

    def __reduce__(self) -> tuple[Any, ...]:
        raise NotSupported(
            "a query session holds the private data it answers from, so it cannot be pickled or "
            "copied; answer the queries where it was started"
        )

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} of {self.declaration.text}: {self.answered} of "
            f"{self.declaration.workload.max_queries} queries answered>"
        )


def clamp(value: int, high: int) -> int:
    """*value* clamped to [0, high] (post-processing of a noisy answer in grid units)."""
    return min(max(value, 0), high)
