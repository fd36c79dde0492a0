"""The set-union-selector kind: differentially private set union (Gopi, Gulhane, Kulkarni, Shen,
Shokouhi, Yekhanin, "Differentially Private Set Union", ICML 2020), a.k.a. partition selection
when a privacy unit touches many partitions.

Each privacy unit holds a set of labels (partitions); a mechanism first bounds every unit to at
most Δ₀ = ``max_partitions_contributed`` labels by a uniform choice drawn from its source (part
of the mechanism: its guarantee covers it), then releases a subset of the union of the units'
sets, never a label no unit holds, as a list in canonical order (:func:`canonical_labels`).
Guarantees are stated for one privacy unit added or removed (or replaced, ``replace_one``), who
may hold any number of labels. Plugins subclass :class:`SetUnionSelector`, implement
:meth:`SetUnionSelector._select` and :meth:`SetUnionSelector._units_needed`, and register the
class through :func:`register_set_union_selectors`. In OpenDP a set-union selector is a
measurement on (unit, label) pairs; in PipelineDP a ``partition_selection_strategy`` of
``select_partitions`` and ``aggregate`` (``docs/kinds.md``).
"""

from __future__ import annotations

import numbers
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dpplug.data import integer_scalar
from dpplug.errors import BadData, NotSupported
from dpplug.guarantee import LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import DataForm, Kind, PipelineRole, ReleaseForm
from dpplug.kinds.set_union_selector.declared import GaussianRounds, GeometricPolicy
from dpplug.mechanism import Mechanism
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface

#: Unit sets: each unit (canonical order) with its distinct labels (canonical order).
UnitSets = tuple[tuple[Any, tuple[Any, ...]], ...]

#: The most distinct labels one unit may hold before bounding.
MAX_UNIT_LABELS = 1 << 16
#: The exact types of units and labels, with their rank in the canonical order (a fast path;
#: subclasses and numpy integers take the general one).
_KINDS: dict[type, int] = {int: 0, str: 1, bytes: 2}


def _key(value: Any) -> tuple[int, Any]:
    """The canonical order of units and labels: ints, then str, then bytes."""
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind, value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | str | bytes):
        raise BadData(
            f"units and labels must be int, str or bytes, got {value!r} ({type(value).__name__})"
        )
    if isinstance(value, numbers.Integral):
        return 0, int(value)
    return (1, value) if isinstance(value, str) else (2, value)


def canonical_labels(labels: Iterable[Any]) -> list[Any]:
    """*labels* in canonical order (ints by value, then str, then bytes)."""
    return sorted(labels, key=_key)


def unit_sets(data: object) -> UnitSets:
    """*data* (a mapping unit → iterable of labels, or an iterable of (unit, label) pairs) as
    :data:`UnitSets`, or :class:`BadData`: units and labels int, str or bytes, at most
    :data:`MAX_UNIT_LABELS` distinct labels per unit. The caller's data is not modified."""
    sets: dict[Any, set[Any]] = {}
    if isinstance(data, Mapping):
        for unit, labels in data.items():
            if isinstance(labels, str | bytes) or not isinstance(labels, Iterable):
                raise BadData(
                    f"unit {unit!r} maps to {labels!r}: give each unit an iterable of labels "
                    "(a list or a set), not a single label"
                )
            sets.setdefault(_norm(unit), set()).update(_norm(label) for label in labels)
    elif isinstance(data, Iterable) and not isinstance(data, str | bytes):
        for pair in data:
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise BadData(f"expected (unit, label) pairs, got {pair!r}")
            sets.setdefault(_norm(pair[0]), set()).add(_norm(pair[1]))
    else:
        raise BadData(
            f"set-union data is a mapping unit → labels or (unit, label) pairs, got "
            f"{type(data).__name__}"
        )
    for unit, labels in sets.items():
        if len(labels) > MAX_UNIT_LABELS:
            raise BadData(
                f"unit {unit!r} holds {len(labels)} labels, more than {MAX_UNIT_LABELS}: "
                "bound them first"
            )
    return tuple((unit, tuple(canonical_labels(sets[unit]))) for unit in sorted(sets, key=_key))


def _norm(value: Any) -> Any:
    """int-likes (numpy integers) as int; everything else checked by :func:`_key`."""
    if type(value) in _KINDS:
        return value
    _key(value)
    return int(value) if isinstance(value, numbers.Integral) else value


class SetUnionSelector(Mechanism):
    """A set-union selector (see the module docstring).

    Required of a plugin: the :class:`Mechanism` declarations (its guarantee's
    ``max_partitions`` is Δ₀), :meth:`_select` (validated unit sets, source → released labels,
    canonical order) and :meth:`_units_needed`.
    """

    #: Δ₀: the most labels of one unit the mechanism uses (set from its parameters).
    max_partitions: int
    #: Whether the units are taken one after the other (a policy), so that a distributed run
    #: hands all the bounded unit sets to one worker, rather than summing weights per label.
    sequential: ClassVar[bool] = False

    @classmethod
    def pipeline_rounds(cls, params: Mapping[str, Any]) -> int:
        """How many rounds a distributed run takes with these parameters (1 by default): a
        pipeline is laid out before its budget is known, from the mechanism's complete
        parameters (the schema's defaults filled in) at a trial budget, and the number must be
        that of the rounds the mechanism declares, at every budget."""
        return 1

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        """A unit's labels (canonical order) bounded to Δ₀: all when it has that few, else a
        uniform choice (a partial Fisher–Yates shuffle, one U(k) draw per kept label), in
        canonical order. Part of every release; distributed runs call it once per unit."""
        if len(labels) <= self.max_partitions:
            return labels
        pool = list(labels)
        for i in range(self.max_partitions):
            j = i + source.uniform(len(pool) - i) - 1
            pool[i], pool[j] = pool[j], pool[i]
        return tuple(canonical_labels(pool[: self.max_partitions]))

    def round_weight(self, round_index: int, items: int) -> int:
        """The weight a unit with *items* labels not yet released gives each of them in round
        *round_index* (distributed runs: the engine sums them per label)."""
        raise NotSupported(f"{self.name} does not run distributed rounds")

    def round_keep(self, round_index: int, total: int, source: RandomSource) -> bool:
        """Whether a label whose weights total *total* is released in that round (one
        independent decision per label)."""
        raise NotSupported(f"{self.name} does not run distributed rounds")

    def declared_release(self) -> GaussianRounds | GeometricPolicy:
        """What the release is declared to be (:mod:`.declared`), for the conformance suite to
        enumerate its law independently of the code; ``NotSupported`` if neither form fits."""
        raise NotSupported(f"{self.name} declares neither Gaussian rounds nor a policy")

    def select(self, data: object, source: RandomSource | None = None) -> list[Any]:
        """The released labels, in canonical order, for *data* (see :func:`unit_sets`)."""
        return self._select(unit_sets(data), default_source(source))

    def units_needed(self, beta: object, items: object = 1) -> int:
        """The fewest units, each holding *items* labels (after bounding, 1 … Δ₀) and all sharing
        one label, for which that label is released with probability ≥ 1 − β (a rigorous bound,
        from the mechanism's first round)."""
        from dpplug.mechanism import BETA

        count = integer_scalar(items, 1, self.max_partitions, "items")
        return self._units_needed(BETA.coerce(beta), count)

    @abstractmethod
    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        """The release for validated unit sets."""

    @abstractmethod
    def _units_needed(self, beta: Any, items: int) -> int:
        """:meth:`units_needed` for validated arguments."""


@hookspec
def register_set_union_selectors(register: Register) -> None:
    """Register set-union selectors: ``register(cls)`` for each subclass of
    :class:`SetUnionSelector`."""


class SetUnionSelectorKind(Kind):
    """The set-union-selector kind (see the module docstring)."""

    name = "set-union-selector"
    hookspec = staticmethod(register_set_union_selectors)
    base = SetUnionSelector
    relations = (Relation.ADD_REMOVE, Relation.REPLACE_ONE)
    data_form = DataForm.UNIT_LABELS
    pipeline_role = PipelineRole.SET_UNION
    summary = "releases part of the union of the privacy units' label sets"
    surfaces = (
        Surface(
            "select",
            "the released labels, canonical order, from each unit's labels (bounded to Δ₀)",
            (
                Dimension.LAW,
                Dimension.RELATIONS,
                Dimension.BATCH,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        Surface(
            "units_needed",
            "the fewest units of t labels each that release a shared label w.p. ≥ 1 − β",
            (Dimension.NUMBERS,),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "max_partitions": "declared (part of the guarantee surface: ℓ₀ of its relation)",
        "pipeline_rounds": "part of the select surface: its distributed route runs that many "
        "rounds, held to the declared rounds",
        "sequential": "the layout of a distributed run (tests/adapters run it)",
        "declared_release": "what the exact checks enumerate the select surface's law from",
        "bound": "part of the select surface (every release bounds its units)",
        "round_weight": "part of the select surface: its distributed route, held to its law",
        "round_keep": "part of the select surface: its distributed route, held to its law",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        declared = mechanism.guarantee.neighbouring.max_partitions
        if declared != getattr(mechanism, "max_partitions", None):
            problems.append(
                f"the guarantee's ℓ₀ = {declared} is not max_partitions = "
                f"{getattr(mechanism, 'max_partitions', None)}"
            )
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """*distance* units added or removed: group privacy over that many steps. A replace-one
        guarantee of this kind is calibrated for two units changed at once, so it also bounds
        one unit added or removed (every built-in says so and the probe checks both)."""
        steps = integer_scalar(distance, 0, 1 << 62, "distance (units added or removed)")
        return mechanism.guarantee.group(steps)

    def release_form(self, mechanism: Mechanism) -> ReleaseForm:
        return ReleaseForm.LABELS

    def apply(self, mechanism: Mechanism, data: Any, source: RandomSource | None = None) -> Any:
        """The released labels in canonical order."""
        assert isinstance(mechanism, SetUnionSelector), mechanism
        return mechanism.select(data, source)


SET_UNION_SELECTOR = SetUnionSelectorKind()
SetUnionSelector.kind = SET_UNION_SELECTOR
