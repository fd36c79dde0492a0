"""The query-releaser kind (Blum & Roth, "Fast Private Data Release Algorithms for Sparse
Queries", RANDOM 2013): answers to k linear queries, each m-sparse, about a dataset of at most n
labelled rows, with accuracy and running time that do not depend on the size of the universe
(which may be undeclared: every byte string, say).

Plugins subclass :class:`QueryReleaser`, implement :meth:`~QueryReleaser._start` and register the
class through :func:`register_query_releasers`. Every mechanism answers through one interface
(:class:`~dpplug.QueryAnswers`): ``start(rows)`` returns an object with ``answer(query)``, an
interactive :class:`~dpplug.QuerySession` or a non-interactive release such as a
:class:`~dpplug.SparseProjection`. Queries, data and the workload are defined in
:mod:`dpplug.kinds.query_releaser.queries`. Guarantees are stated for adding or removing one row
(Blum & Roth's Def. 2.5) with n public: n bounds the rows, and larger data is refused before
anything is drawn. In OpenDP an interactive releaser is a measurement whose release is a Queryable
and a non-interactive one an ordinary measurement on label vectors or counts; in PipelineDP a
non-interactive releaser is released centrally from the label counts. ``docs/kinds.md`` is the
reference.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from dpplug.errors import BadParameter, NotSupported
from dpplug.guarantee import LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import CentralPlan, DataForm, Kind, LabelDistance, PipelineRole
from dpplug.kinds.query_releaser.queries import (
    Declaration,
    LabelCounts,
    QueryAnswers,
    Workload,
    label_counts,
)
from dpplug.mechanism import Mechanism
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface
from dpplug.universe import Universe


class QueryReleaser(Mechanism):
    """A release of answers to m-sparse linear queries about at most n rows of labels.

    The data is rows (an iterable of labels) or a mapping label → count; :meth:`start` validates
    it (labels, counts, at most n rows; labels in the universe when one is declared) before
    anything is drawn, and returns the mechanism's answers object.

    Required of a plugin:

    - ``n`` (the public bound on rows), ``universe`` (a :class:`~dpplug.universe.Universe`, or
      ``None`` for Blum & Roth's undeclared universe) and ``workload`` (a
      :class:`~dpplug.Workload`: k, m and the grid W the guarantee and accuracy cover),
      as instance attributes, and the :class:`Mechanism` declarations, with accuracy in grid
      units (an answer within a/(n·W) of the truth);
    - ``beta``, the failure probability of the accuracy each release carries;
    - :meth:`_start` (validated label counts, source) → a :class:`~dpplug.QueryAnswers`
      carrying :meth:`declaration`;
    - ``interactive = False`` for a release that answers from what it released alone, with a
      :meth:`central_plan` if PipelineDP should run it.
    """

    n: int
    universe: Universe | None
    workload: Workload
    #: The failure probability of the accuracy attached to each release.
    beta: Any
    #: Whether :meth:`start` returns a session holding the data (answers computed as queries
    #: arrive) rather than a release that answers from what it released.
    interactive: ClassVar[bool] = True

    def start(self, data: object, source: RandomSource | None = None) -> QueryAnswers:
        """The release on *data* (rows of labels, or a mapping label → count)."""
        counts = self.label_counts(data)
        return self._start(counts, default_source(source))

    def declaration(self) -> Declaration:
        """What every release of this mechanism declares (its accuracy at :attr:`beta`),
        computed on first use and kept: a mechanism does not change once built."""
        found = self.__dict__.get("_declaration")
        if found is None:
            found = self.__dict__["_declaration"] = Declaration(
                self.name,
                dict(self.params),
                repr(self),
                self.n,
                self.universe,
                self.workload,
                self.guarantee,
                self.accuracy(self.beta),
            )
        return found

    def label_counts(self, data: object) -> LabelCounts:
        """*data* validated (:func:`dpplug.kinds.query_releaser.queries.label_counts`)."""
        return label_counts(data, self.n, self.universe, self.name)

    @abstractmethod
    def _start(self, counts: LabelCounts, source: RandomSource) -> QueryAnswers:
        """The release for validated label counts, drawn from *source*."""

    @classmethod
    def central_plan(cls) -> CentralPlan:
        """How an engine releases this mechanism from label counts (non-interactive ones)."""
        reason = (
            "its session holds the data and answers queries as they arrive, so it runs where the "
            "data is (OpenDP's Queryable, or start() in the driver), not as a pipeline result"
            if cls.interactive
            else "it has no central plan"
        )
        raise NotSupported(f"{cls.name} is not released by an engine: {reason}")


@hookspec
def register_query_releasers(register: Register) -> None:
    """Register query releasers: ``register(cls)`` for each subclass of
    :class:`dpplug.QueryReleaser`."""


class QueryReleaserKind(Kind):
    """The query-releaser kind (see the module docstring)."""

    name = "query-releaser"
    hookspec = staticmethod(register_query_releasers)
    base = QueryReleaser
    relations = (Relation.ADD_REMOVE,)
    data_form = DataForm.LABELS
    pipeline_role = PipelineRole.CENTRAL_RELEASE
    summary = "answers to k m-sparse linear queries about labelled rows, any universe"
    surfaces = (
        Surface(
            "start",
            "a release (a session, or a non-interactive release) on rows or label counts",
            (
                Dimension.LAW,
                Dimension.RELATIONS,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        Surface(
            "answer",
            "one query's answer, one call per query, up to the session's k",
            (Dimension.LAW, Dimension.STATE),
        ),
        Surface(
            "answers",
            "a workload of queries answered in one call",
            (Dimension.LAW, Dimension.BATCH),
        ),
        Surface(
            "central_plan",
            "the release PipelineDP's engines make from the data's label counts (its finish step)",
            (Dimension.STATE,),
            applies=lambda mechanism: not getattr(mechanism, "interactive", True),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "declaration": "what every release carries (part of the whole release)",
        "label_counts": "validation, before anything is drawn (bad-input)",
        "n": "declared (declaration)",
        "universe": "declared (declaration)",
        "workload": "declared (declaration)",
        "beta": "declared (declaration)",
        "interactive": "declared (declaration)",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        n = getattr(mechanism, "n", None)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            problems.append("n (the public bound on rows) must be an int ≥ 1")
        universe = getattr(mechanism, "universe", "missing")
        if universe is not None and not isinstance(universe, Universe):
            problems.append("universe must be a dpplug Universe or None")
        workload = getattr(mechanism, "workload", None)
        if (
            not isinstance(workload, Workload)
            or min(workload.max_queries, workload.sparsity, workload.grid) < 1
        ):
            problems.append("workload must be a dpplug Workload with k, m and W ≥ 1")
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """l₁ rows apart, by group privacy over l₁ steps of one row added or removed.

        Blum & Roth's neighbours differ in one row (Def. 2.5), with n public: the guarantee
        is for one row added or removed while the data has at most n rows (larger data is
        refused before any draw). Label counts at l01inf distance (l₀, l₁, l∞) differ by l₁
        rows in all, and label vectors at symmetric distance k by k rows, so the bound is the
        guarantee's group privacy over l₁ steps, (l₁·ε, δ·Σ_{i<l₁} e^{iε}) as a rigorous upper
        bound (:class:`~dpplug.guarantee.LossBound`); removals first keep every intermediate
        dataset within n rows.
        """
        if not isinstance(distance, LabelDistance):
            raise TypeError(f"a query releaser's distance is a LabelDistance, got {distance!r}")
        return mechanism.guarantee.group(distance.l1)

    def interactive(self, mechanism: Mechanism) -> bool:
        return _releaser(mechanism).interactive

    def check_labels(self, mechanism: Mechanism) -> None:
        universe = _releaser(mechanism).universe
        if universe is not None and not isinstance(universe.label(0), str):
            raise BadParameter(
                f"frameworks' labels are str, but {mechanism.name} was built over the universe "
                f"{universe.spec}; declare a text:L or labels:[…] universe of strings, or none"
            )

    def apply(self, mechanism: Mechanism, data: Any, source: RandomSource | None = None) -> Any:
        """The answers object itself: a session, or a non-interactive release."""
        return _releaser(mechanism).start(data, source)

    def central_plan(self, cls: type[Mechanism]) -> CentralPlan:
        """The mechanism class's own plan (:meth:`QueryReleaser.central_plan`)."""
        if not issubclass(cls, QueryReleaser):
            raise TypeError(f"{cls.__name__} is not a QueryReleaser")
        return cls.central_plan()


def _releaser(mechanism: Mechanism) -> QueryReleaser:
    assert isinstance(mechanism, QueryReleaser), mechanism
    return mechanism


QUERY_RELEASER = QueryReleaserKind()
QueryReleaser.kind = QUERY_RELEASER
