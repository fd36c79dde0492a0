"""What every mechanism declares, whatever its kind: name, parameters, guarantee, accuracy,
provenance, and the registry it resolves other mechanisms in.

A kind of mechanism (:mod:`dpplug.kinds`) subclasses :class:`Mechanism` with the methods of its
own contract; a plugin subclasses the kind's base class. ``docs/kinds.md`` is the reference.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.params import Schema, probability_param

if TYPE_CHECKING:
    from dpplug.kind import Kind
    from dpplug.plugin_registry import Registry
    from dpplug.structures import ExactStructure

BETA = probability_param("beta", "Failure probability of the accuracy bound.")
#: How many (β, accuracy) pairs :meth:`Mechanism.accuracy` keeps per mechanism.
_ACCURACIES_KEPT = 8
#: The exact rational type: a β of it that was validated before is looked up directly.
MPQ = type(mpq(0))


class Mechanism(ABC):
    """The declarations every mechanism makes.

    Subclasses set the class attributes and implement :attr:`guarantee` and :meth:`_accuracy`.
    ``__init__`` validates the keyword parameters through :attr:`schema` before anything else;
    the exact values are in :attr:`params` and whatever the mechanism derives from them (rounded
    ε, truncation, …) in :attr:`derived`.

    *registry* is the registry the mechanism was created from. A mechanism that uses other
    mechanisms by name (a releaser's ``sampler``) looks them up in :meth:`registry_in_use`:
    ``None`` means the default registry (:func:`dpplug.registry`); an explicitly passed registry
    is always the one used, even when it is empty.
    """

    name: ClassVar[str]
    #: The kind this mechanism is (set by each kind's base class, :mod:`dpplug.kinds`).
    kind: ClassVar[Kind]
    schema: ClassVar[Schema]
    summary: ClassVar[str]
    #: The paper and algorithm implemented, e.g. "Balcer & Vadhan 2018, Alg. 4.8 (GeoSample)".
    reference: ClassVar[str]
    #: True if the mechanism's calls use a number of draws fixed by the parameters and the
    #: input size, never by the data or by chance.
    strict_time: ClassVar[bool] = False
    #: Small parameterisations on which exact checks are feasible (conformance).
    conformance_cases: ClassVar[tuple[Mapping[str, Any], ...]] = ()

    def __init__(self, **params: object) -> None:
        registry = params.pop("registry", None)
        if registry is not None and not _is_registry(registry):
            raise BadParameter(
                f"registry must be a dpplug Registry (or None for the default one), got "
                f"{type(registry).__name__}"
            )
        self.registry: Registry | None = registry  # type: ignore[assignment]
        self.params: dict[str, Any] = self.schema.validate(params, self.name)
        self.derived: dict[str, Any] = {}
        # The answers of accuracy(), made here so that shallow copies share them (an exact
        # release law replays a copy per path: :mod:`dpplug.kinds.histogram_releaser.release_law`).
        self._accuracies: dict[Any, Accuracy] = {}

    def registry_in_use(self) -> Registry:
        """:attr:`registry`, or the default registry when none was given (tested with ``is``)."""
        if self.registry is not None:
            return self.registry
        from dpplug.plugin_registry import registry

        return registry()

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The privacy guarantee actually achieved with these parameters."""

    def accuracy(self, beta: object) -> Accuracy:
        """The (a, β) accuracy this mechanism guarantees for failure probability *beta*.

        Mechanisms are immutable once built, so the last few answers are kept: releasers attach
        the accuracy at their β to every release, and some bounds take a scan to compute."""
        known: dict[Any, Accuracy] = self.__dict__.setdefault("_accuracies", {})
        if type(beta) is MPQ and beta in known:  # an exact β already validated: no coercion
            return known[beta]
        exact = BETA.coerce(beta)
        if exact not in known:
            if len(known) >= _ACCURACIES_KEPT:
                known.pop(next(iter(known)))
            known[exact] = self._accuracy(exact)
        return known[exact]

    @abstractmethod
    def _accuracy(self, beta: Any) -> Accuracy:
        """The accuracy at an exact β in (0, 1)."""

    def exact_structure(self) -> ExactStructure | None:
        """What makes this mechanism's release law computable (:mod:`dpplug.structures`), for
        the conformance suite's exact checks; ``None`` (the default) when its kind's own
        declarations suffice (a sampler's pmf, a selector's keep probabilities) or when the
        release has no computable law (it is then audited on samples only)."""
        return None

    def __repr__(self) -> str:
        """``dpplug.create(name, params…)``, made once (releases carry it)."""
        shown: str | None = self.__dict__.get("_repr")
        if shown is None:
            args = ", ".join(f"{k}={v}" for k, v in self.params.items() if v is not None)
            shown = self.__dict__["_repr"] = f"dpplug.create({self.name!r}, {args})"
        return shown

    def __reduce__(self) -> tuple[Any, ...]:
        """A mechanism pickles as its class (by reference), its registry and its validated
        parameters, and is rebuilt from them where it is unpickled: it is immutable once built
        and a function of its parameters (the conformance suite's hygiene contract checks that
        its outputs do not depend on its history), so what it computed from them (tables,
        caches, which may hold functions that do not pickle) is computed again there."""
        return (_rebuild, (type(self), self.registry, dict(self.params)))

    def __copy__(self) -> Mechanism:
        """A shallow copy shares what the mechanism computed (its caches), as ``copy.copy`` does
        for plain objects; only pickling rebuilds (:meth:`__reduce__`)."""
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__)
        return copied


def _rebuild(cls: type[Mechanism], registry: Registry | None, params: dict[str, Any]) -> Mechanism:
    """A mechanism from its pickle (:meth:`Mechanism.__reduce__`)."""
    return cls(registry=registry, **params)


def _is_registry(value: object) -> bool:
    from dpplug.plugin_registry import Registry

    return isinstance(value, Registry)
