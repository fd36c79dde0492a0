"""Validated parameter schemas.

A mechanism class declares its parameters as a :class:`Schema` of :class:`Param` s, each of a
type from :mod:`dpplug.param_types`. The registry validates every call through it before the
mechanism exists, so bad input never reaches a sampler.
Users pass ε, δ, γ, β as ``float``, ``int``, ``Fraction`` or ``mpq`` (strings from the CLI); the
schema returns exact ``mpq`` values and exact ``int`` s, and the mechanism reports the guarantee it
actually achieves from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.exact import Rat
from dpplug.param_types import INTEGER, RATIONAL, ParamType

if TYPE_CHECKING:
    import random

_REQUIRED: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter, required or with a default, of a type from :mod:`dpplug.param_types`:
    ``RATIONAL`` and ``INTEGER`` (in an interval: ``low``/``high`` bound the value, ``None`` for
    unbounded, ``low_open``/``high_open`` make a bound strict), ``BOOLEAN``, ``TEXT`` (a non-empty
    string, such as the name of a registered sampler), ``UNIVERSE`` (a
    :class:`dpplug.universe.Universe` or its spec text) and ``OPTIONS`` (keyword parameters for
    another mechanism: a mapping, or text ``"key=value,key=value"``). ``default=None`` with
    ``optional=True`` means "may be left out".
    """

    name: str
    type: ParamType
    doc: str
    low: Any = None
    high: Any = None
    low_open: bool = False
    high_open: bool = False
    default: Any = _REQUIRED
    optional: bool = False
    example: str = ""
    #: What to do instead when the value is outside [low, high] (added to that message).
    beyond: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.type, ParamType):
            raise TypeError(
                f"parameter {self.name}: type={self.type!r} is not a parameter type; pass one of "
                "dpplug.param_types' RATIONAL, INTEGER, BOOLEAN, TEXT, UNIVERSE or OPTIONS"
            )

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED and not self.optional

    def range_text(self) -> str:
        return self.type.range_text(self)

    def coerce(self, value: object) -> Any:
        """The exact value (``int``, ``mpq``, ``bool``, …) for *value*, or :class:`BadParameter`."""
        if value is None and self.optional:
            return None
        return self.type.coerce(self, value)

    def candidates(self, names: Sequence[str], rng: random.Random) -> list[object]:
        """Valid values worth trying (:meth:`ParamType.candidates`)."""
        return self.type.candidates(self, names, rng)

    def bad_values(self) -> list[object]:
        """Values to refuse (:meth:`ParamType.bad_values`), and ``None`` unless optional."""
        values = self.type.bad_values(self)
        return values if self.optional else [*values, None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.name,
            "range": self.range_text(),
            "required": self.required,
            "default": None if self.default is _REQUIRED else str(self.default),
            "doc": self.doc,
        }


@dataclass(frozen=True)
class Schema:
    """The parameters of one mechanism."""

    params: tuple[Param, ...]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.params)

    def validate(self, given: Mapping[str, object], mechanism: str = "") -> dict[str, Any]:
        """Exact values for every parameter; :class:`BadParameter` naming what to change."""
        known = {p.name for p in self.params}
        unknown = sorted(set(given) - known)
        where = f" for {mechanism}" if mechanism else ""
        if unknown:
            raise BadParameter(
                f"unknown parameter(s) {', '.join(unknown)}{where}; "
                f"the parameters are: {', '.join(p.name for p in self.params)}"
            )
        values: dict[str, Any] = {}
        for p in self.params:
            if p.name in given:
                values[p.name] = p.coerce(given[p.name])
            elif p.required:
                raise BadParameter(
                    f"missing parameter {p.name}{where}: {p.doc} Pass {p.name}=… "
                    f"in {p.range_text()}" + (f", e.g. {p.name}={p.example}" if p.example else "")
                )
            else:
                values[p.name] = None if p.default is _REQUIRED else p.coerce(p.default)
        return values


def epsilon_param(doc: str, high: int = 64, low: Any = 0) -> Param:
    """The ε parameter of a mechanism: a rational in (low, high] (low excluded only when 0)."""
    return Param("epsilon", RATIONAL, doc, low=low, low_open=low == 0, high=high, example="0.5")


#: The example each probability parameter's messages give.
_PROBABILITY_EXAMPLES = {"delta": "1e-6", "beta": "1/20"}


def probability_param(
    name: Literal["delta", "beta"],
    doc: str,
    *,
    low: Rat = 0,
    high: Rat = 1,
    default: Any = _REQUIRED,
) -> Param:
    """The δ of a guarantee or the β of an accuracy bound: a rational in [low, high] that is
    never 1 (the bound is excluded when it is 1) and 0 only as the default (δ = 0: pure DP; a
    low of 0 is excluded otherwise)."""
    return Param(
        name,
        RATIONAL,
        doc,
        low=low,
        low_open=low == 0 and default != 0,
        high=high,
        high_open=high == 1,
        default=default,
        example=_PROBABILITY_EXAMPLES[name],
    )


def count_bound_param(optional: bool = False, high: int = 1 << 62, beyond: str = "") -> Param:
    """n: the largest true count the mechanism accepts (BV's counting-query domain [0, n]);
    *beyond* says what to use for a larger n."""
    return Param(
        "n",
        INTEGER,
        "Largest possible true count: counts are in [0, n].",
        low=1,
        high=high,
        optional=optional,
        example="100",
        beyond=beyond,
    )


def unit_fraction(value: Any) -> mpq:
    """1/⌈1/value⌉: *value* rounded down into ℕ⁻¹ = {1/k}, as the Balcer–Vadhan samplers need."""
    k = -(-mpq(1) // mpq(value))
    return mpq(1, int(k))
