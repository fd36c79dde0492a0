"""What a kind of mechanism is: the one description that the registry, the conformance suite and
the framework adapters ask, so that none of them switches on the kind itself.

A :class:`Kind` names its base class and its hookspec, the neighbouring relations its mechanisms
may state guarantees for, the form of data the frameworks hand it (:class:`DataForm`), how its
guarantee becomes a privacy map over the frameworks' distances (:meth:`Kind.privacy_bound`), how
it runs on data in that form (:meth:`Kind.apply`) and how PipelineDP runs it
(:class:`PipelineRole`, :meth:`Kind.central_plan`). Each kind lives in one module of
:mod:`dpplug.kinds`; ``docs/adding-a-kind.md`` walks through adding one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dpplug.errors import BadParameter, NotSupported
from dpplug.guarantee import LossBound, Relation
from dpplug.randomness import RandomSource
from dpplug.surfaces import MECHANISM_NOT_SURFACES, Surface

if TYPE_CHECKING:
    from dpplug.mechanism import Mechanism


class DataForm(StrEnum):
    """The data a framework hands a mechanism of a kind."""

    #: One integer count (OpenDP: ``atom_domain`` of an integer type with ``absolute_distance``).
    COUNT = "count"
    #: Label data: a mapping str label → non-negative count (OpenDP: after ``then_count_by``, with
    #: ``l01inf_distance``), or a vector of labels (each one row, ``symmetric_distance``).
    LABELS = "labels"
    #: Each privacy unit's labels: a mapping unit → iterable of str labels, or an iterable of
    #: (unit, label) pairs (OpenDP: a user domain of pairs, at a distance of units added or
    #: removed).
    UNIT_LABELS = "unit-labels"


class ReleaseForm(StrEnum):
    """What :meth:`Kind.apply` releases, so a framework can declare its type before any release
    (OpenDP's ``TO``; ``docs/kinds.md``)."""

    #: One ``int`` that fits in 64 bits (a sampler's noisy count).
    COUNT = "count"
    #: A list of str labels in sorted order (the labels a partition selector keeps).
    LABELS = "labels"
    #: A mapping str label → ``int`` that fits in 64 bits (a thresholding selector's noisy counts).
    LABEL_COUNTS = "label-counts"
    #: Anything else, carried as a Python object (a histogram, a session).
    OBJECT = "object"


class PipelineRole(StrEnum):
    """Where a kind enters a PipelineDP pipeline."""

    #: Noise for PipelineDP's COUNT, PRIVACY_ID_COUNT and ``add_dp_noise`` (the engine's
    #: ``count_noise``).
    COUNT_NOISE = "count-noise"
    #: A ``partition_selection_strategy``: one keep decision per partition.
    PARTITION_SELECTION = "partition-selection"
    #: A release computed centrally from label counts the engine aggregates
    #: (:meth:`Kind.central_plan`).
    CENTRAL_RELEASE = "central-release"
    #: A set union: the engine groups rows by privacy unit, weighs each unit's partitions and
    #: sums the weights per partition (``DPEngine.select_partitions`` and ``aggregate`` with a
    #: set-union ``partition_selection_strategy``).
    SET_UNION = "set-union"


@dataclass(frozen=True)
class LabelDistance:
    """How far apart two label datasets are, in OpenDP's ``l01inf_distance`` terms.

    ``l0``: how many labels' counts differ; ``l1``: the total of the differences; ``linf``: the
    largest single difference. Datasets of rows at symmetric distance k are ``rows(k)``.
    """

    l0: int
    l1: int
    linf: int

    @classmethod
    def rows(cls, k: int) -> LabelDistance:
        """k rows added or removed: at most k labels change, by k in all, by at most k each."""
        return cls(k, k, k)


def _no_public_randomness(params: Mapping[str, Any], source: RandomSource) -> None:
    return None


@dataclass(frozen=True)
class CentralPlan:
    """How an engine releases a mechanism of a kind centrally from the nonempty bins of the data.

    When the pipeline is built, ``public(params, source)`` draws whatever public randomness the
    aggregation needs from the user's parameters (none by default; it never depends on the
    budget, which is not known yet). The engine then computes ``per_bin(public, label, count)``
    for each label with a positive count (one row per privacy unit), folds the values with the
    associative and commutative ``combine`` starting from ``empty``, and calls
    ``finish(mechanism, public, folded)`` once, centrally, with the mechanism built from the
    budget. Everything private happens in ``finish``; the map-reduce only aggregates true counts.
    The functions are module-level, so they pickle by reference to Beam and Spark workers.
    """

    per_bin: Callable[[Any, Any, int], Any]
    combine: Callable[[Any, Any], Any]
    empty: Any
    finish: Callable[[Mechanism, Any, Any], Any]
    public: Callable[[Mapping[str, Any], RandomSource], Any] = _no_public_randomness


class Kind(ABC):
    """A kind of mechanism (see the module docstring). Each kind is one instance of a subclass.

    Attributes: ``name`` (the one term used in code, CLI, JSON and docs, e.g. ``"sampler"``),
    ``hookspec`` (the pluggy hookspec function plugins implement), ``base`` (the abstract class
    plugins subclass), ``relations`` (the neighbouring relations a guarantee of this kind may
    state), ``data_form`` and ``pipeline_role``, a one-line ``summary``, and the inventory the
    conformance suite derives its checks from (:mod:`dpplug.surfaces`): ``surfaces``, every
    public entry point and declared quantity of the kind's mechanisms and of what their calls
    return, and ``not_surfaces``, the base class's other public attributes with the reason each
    is not one.
    """

    name: str
    hookspec: Callable[..., None]
    base: type[Mechanism]
    relations: tuple[Relation, ...]
    data_form: DataForm
    pipeline_role: PipelineRole
    summary: str
    surfaces: tuple[Surface, ...]
    not_surfaces: Mapping[str, str] = MECHANISM_NOT_SURFACES

    def surfaces_of(self, mechanism: Mechanism) -> tuple[Surface, ...]:
        """The surfaces *mechanism* has (those that apply to it)."""
        return tuple(surface for surface in self.surfaces if surface.applies(mechanism))

    @property
    def hook(self) -> str:
        """The hook's name, e.g. ``"register_samplers"``."""
        return self.hookspec.__name__

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        """What the mechanism fails to declare beyond :class:`~dpplug.mechanism.Mechanism`'s
        declarations (attributes the kind's contract requires); empty when all is declared."""
        relation = mechanism.guarantee.neighbouring.relation
        if relation not in self.relations:
            allowed = ", ".join(r.value for r in self.relations)
            return [f"a {self.name} states its guarantee for {allowed}, not {relation.value}"]
        return []

    @abstractmethod
    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """Rigorous upper bounds on (ε, δ) for inputs *distance* apart in the frameworks'
        metric: an integer absolute distance for :attr:`DataForm.COUNT`, a
        :class:`LabelDistance` for :attr:`DataForm.LABELS`. Translates the mechanism's own
        neighbouring relation (and group privacy for larger distances), in time that does not
        grow with the distance beyond its logarithm (:meth:`~dpplug.guarantee.Guarantee.group`)."""

    @abstractmethod
    def apply(self, mechanism: Mechanism, data: Any, source: RandomSource | None = None) -> Any:
        """The mechanism on framework data of :attr:`data_form` (an ``int`` count, or a mapping
        str label → count), returning plain values a framework can pass on."""

    def release_form(self, mechanism: Mechanism) -> ReleaseForm:
        """The form of what :meth:`apply` returns for *mechanism*; an object by default."""
        return ReleaseForm.OBJECT

    def check_labels(self, mechanism: Mechanism) -> None:
        """:class:`BadParameter` if the mechanism cannot take str labels (frameworks' labels
        are str); kinds of :attr:`DataForm.LABELS` whose mechanisms declare a universe check
        it. Nothing to check by default."""
        return None

    def interactive(self, mechanism: Mechanism) -> bool:
        """Whether the mechanism's release is an interactive session, whose answers are computed
        from the data as queries arrive (a framework then returns it as a queryable object),
        rather than one value. False by default."""
        return False

    def central_plan(self, cls: type[Mechanism]) -> CentralPlan:
        """How an engine releases mechanisms of class *cls* of this kind (kinds of
        :attr:`PipelineRole.CENTRAL_RELEASE`); a kind may plan differently per class."""
        raise NotSupported(f"a {self.name} is not released centrally from label counts")

    def __repr__(self) -> str:
        return f"<kind {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Kinds pickle by name, so a kind sent to a worker process is that process's kind."""
        return kind_named, (self.name,)


def kind_named(name: str) -> Kind:
    """The kind called *name* (:data:`dpplug.kinds.KINDS`)."""
    from dpplug.kinds import KINDS

    for kind in KINDS:
        if kind.name == name:
            return kind
    raise NotSupported(f"no kind of mechanism is called {name!r}")


def check_role(kind: Kind, role: PipelineRole, what: str) -> None:
    """:class:`BadParameter` unless *kind* enters pipelines as *role*; *what* names the call
    that needs that role."""
    if kind.pipeline_role is not role:
        raise BadParameter(
            f"{what} takes a mechanism that enters pipelines as {role.value}; a {kind.name} "
            f"enters them as {kind.pipeline_role.value} (`dpplug list` shows each mechanism's kind)"
        )
