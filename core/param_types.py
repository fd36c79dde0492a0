"""The types a parameter can have, each a class owning everything that depends on it.

A :class:`~dpplug.params.Param` is declared with one of the instances below (``RATIONAL``,
``INTEGER``, ``BOOLEAN``, ``TEXT``, ``UNIVERSE``, ``OPTIONS``); ``dpplug describe`` shows the
type's :attr:`ParamType.name`. The type reads a value
(:meth:`ParamType.coerce`: the exact value or :class:`~dpplug.errors.BadParameter` saying what
to pass), says what it accepts (:meth:`ParamType.range_text`), and tells the conformance suite
which valid values are worth trying (:meth:`ParamType.candidates`) and which invalid ones must
be refused (:meth:`ParamType.bad_values`). Six types cover the built-ins:

- ``RATIONAL`` and ``INTEGER``: a number in the interval of the parameter's ``low``/``high``
  (``None``: unbounded; ``low_open``/``high_open``: strict), read exactly;
- ``BOOLEAN``: ``True`` or ``False``;
- ``TEXT``: a non-empty string, such as the name of a registered mechanism (a releaser's
  ``sampler``);
- ``UNIVERSE``: a :class:`dpplug.universe.Universe` or its spec text;
- ``OPTIONS``: keyword parameters for another mechanism, a mapping or ``"key=value,…"``.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadParameter, DpplugError
from dpplug.exact import Rat, as_rational
from dpplug.param_text import parse_value
from dpplug.universe import parse_universe

if TYPE_CHECKING:
    import random

    from dpplug.params import Param


@dataclass(frozen=True)
class ParamType(ABC):
    """The type of a parameter (see the module docstring). Types hold no state of their own: a
    parameter's interval, name and example are the :class:`~dpplug.params.Param`'s, passed in."""

    #: The shorthand name, shown as the parameter's type by ``dpplug describe``.
    name: ClassVar[str]

    @abstractmethod
    def coerce(self, param: Param, value: object) -> Any:
        """The exact value of *value* for *param*, or :class:`BadParameter` saying what to pass."""

    @abstractmethod
    def range_text(self, param: Param) -> str:
        """What *param* accepts, for messages and ``dpplug describe``."""

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        """Valid values of *param* worth trying besides the declared cases (none by default).
        *names* are the mechanisms a name may safely refer to; *rng* chooses test points only."""
        return []

    @abstractmethod
    def bad_values(self, param: Param) -> list[object]:
        """Values a mechanism must refuse with a :class:`BadParameter`: *param* itself, or the
        mechanism where the value is well-formed but not for it (an unknown option; 10^400 for
        an integer without an upper bound)."""


#: Values of the wrong type for any number.
_WRONG_TYPES: tuple[object, ...] = ("1", True, [1], {"a": 1}, object())
_NON_FINITE = (math.nan, math.inf, -math.inf)


@dataclass(frozen=True)
class _IntervalType(ParamType):
    """A number in the interval [low, high] of the parameter (bounds optional, maybe strict)."""

    #: How the messages ask for a value.
    asked: ClassVar[str]

    def range_text(self, param: Param) -> str:
        low = "-∞" if param.low is None else str(param.low)
        high = "∞" if param.high is None else str(param.high)
        return f"{'(' if param.low_open or param.low is None else '['}{low}, {high}" + (
            ")" if param.high_open or param.high is None else "]"
        )

    def _fail(self, param: Param, value: object, why: str) -> BadParameter:
        example = f", e.g. {param.name}={param.example}" if param.example else ""
        return BadParameter(
            f"{param.name}={_shown(value)} is invalid: {why}. Pass {param.name} as {self.asked} "
            f"in {self.range_text(param)}{example}."
        )

    def _read(self, param: Param, value: object) -> Rat:
        """*value* as an exact rational, or :class:`BadParameter`."""
        try:
            return as_rational(value)
        except (TypeError, ValueError) as exc:
            raise self._fail(param, value, str(exc)) from None

    def _within(self, param: Param, value: object, exact: Rat) -> Rat:
        """*exact*, or :class:`BadParameter` if it is outside the interval."""
        low, high = param.low, param.high
        if low is not None and (exact < low or (param.low_open and exact == low)):
            raise self._fail(param, value, f"it must be {'>' if param.low_open else '≥'} {low}")
        if high is not None and (exact > high or (param.high_open and exact == high)):
            beyond = f" ({param.beyond})" if param.beyond else ""
            bound = f"{'<' if param.high_open else '≤'} {high}"
            raise self._fail(param, value, f"it must be {bound}{beyond}")
        return exact

    def bad_values(self, param: Param) -> list[object]:
        """Wrong types, non-finite and huge numbers, and the first values beyond each bound."""
        values: list[object] = [*_WRONG_TYPES, *_NON_FINITE, 10**400, -(10**400)]
        if param.low is not None:
            values.append(param.low if param.low_open else param.low - 1)
        if param.high is not None:
            values.append(param.high if param.high_open else param.high + 1)
        return values


@dataclass(frozen=True)
class RationalType(_IntervalType):
    """An exact rational (``mpq``) from an int, float (exactly), ``Fraction``, ``mpq`` or numpy
    number. Candidates: a ladder of rationals within the range with a seeded log-uniform point in
    each gap wider than :attr:`GAP`, so a flaw on a whole gap (such as 2 < ε < 8) is found."""

    name = "rational"
    asked = "a number (int, float or Fraction)"
    #: The rungs of the ladder (those the range allows).
    LADDER: ClassVar[tuple[Rat, ...]] = tuple(
        mpq(v) for v in ("1/1000", "1/20", "1/4", "1/2", "1", "2", "8", "64")
    )
    #: A gap between two rungs wider than this factor gets a seeded point inside.
    GAP: ClassVar[int] = 2
    #: A rung this close (as a factor) to a bound of the range is left to the bound.
    NEAR: ClassVar[Rat] = mpq(5, 4)

    def coerce(self, param: Param, value: object) -> Any:
        return mpq(self._within(param, value, self._read(param, value)))

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        bounds = [mpq(b) for b in (param.low, param.high) if b is not None and _inside(param, b)]
        rungs = [v for v in self.LADDER if _inside(param, v) and not self._near(v, bounds)]
        ladder = sorted(dict.fromkeys([*rungs, *bounds]))
        inside = [_between(a, b, rng) for a, b in pairwise(ladder) if 0 < a and self.GAP * a < b]
        return [*ladder, *(v for v in inside if _inside(param, v))]

    def _near(self, value: Rat, bounds: list[Rat]) -> bool:
        """Whether *value* is within a factor :attr:`NEAR` of one of *bounds* (which stands for
        it)."""
        return any(0 < b and b / self.NEAR <= value <= b * self.NEAR for b in bounds)


@dataclass(frozen=True)
class IntegerType(_IntervalType):
    """An exact ``int`` from an int, ``Fraction`` or numpy integer of integral value (not a
    float: ``n=2.0`` is refused). Candidates: the three smallest values, and the top of a range
    of at most 16 values; the size ladder (:meth:`ladder`) goes further up."""

    name = "integer"
    asked = "an integer"
    #: Rungs of the size ladder: one past the sizes where code keyed to a size changes (a byte
    #: of flags, a 64-bit word, tables of 1024 and 2^16 entries, 31- and 32-bit integers,
    #: integers exact in a double).
    LADDER: ClassVar[tuple[int, ...]] = tuple((1 << k) + 1 for k in (3, 6, 10, 16, 31, 32, 53))

    def ladder(self, param: Param) -> list[int]:
        """Values of *param* up its range beyond :meth:`candidates`: the rungs of
        :attr:`LADDER` inside the range and its top."""
        low = int(param.low) if param.low is not None else 0
        top = [int(param.high)] if param.high is not None and param.high > low + 16 else []
        rungs = [v for v in self.LADDER if v > low + 2 and (param.high is None or v < param.high)]
        return [*rungs, *top]

    def coerce(self, param: Param, value: object) -> Any:
        exact = self._read(param, value)
        if not isinstance(value, numbers.Rational) or exact.denominator != 1:
            raise self._fail(param, value, "it is not an integer")
        return int(self._within(param, value, exact))

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        low = int(param.low) if param.low is not None else 0
        values: list[object] = [low, low + 1, low + 2]
        if param.high is not None and param.high <= low + 16:
            values.append(int(param.high))
        return [v for v in values if param.high is None or v <= param.high]

    def bad_values(self, param: Param) -> list[object]:
        return [*super().bad_values(param), 1.5, 2.0]


@dataclass(frozen=True)
class BooleanType(ParamType):
    """``True`` or ``False`` (numpy booleans too; not 0, 1 or ``"true"``)."""

    name = "boolean"

    def coerce(self, param: Param, value: object) -> Any:
        if isinstance(value, bool | np.bool_):
            return bool(value)
        raise BadParameter(f"{param.name}={_shown(value)} is invalid: pass True or False.")

    def range_text(self, param: Param) -> str:
        return "True or False"

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        return [False, True]

    def bad_values(self, param: Param) -> list[object]:
        return ["true", 1, 0, 1.0, math.nan, [True]]


@dataclass(frozen=True)
class TextType(ParamType):
    """A non-empty string, such as the name of a registered mechanism. Candidates: the names of
    the mechanisms the suite trusts (the built-ins and the plugin's own distribution's)."""

    name = "text"

    def coerce(self, param: Param, value: object) -> Any:
        if not isinstance(value, str) or not value:
            raise BadParameter(f"{param.name}={_shown(value)} is invalid: pass a non-empty string.")
        return value

    def range_text(self, param: Param) -> str:
        return "a name"

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        return list(names)

    def bad_values(self, param: Param) -> list[object]:
        return ["", 1, 1.5, True, b"name", ["name"], {"name": 1}]


@dataclass(frozen=True)
class UniverseType(ParamType):
    """A :class:`~dpplug.universe.Universe` or its spec text (:func:`parse_universe`)."""

    name = "universe"

    def coerce(self, param: Param, value: object) -> Any:
        return parse_universe(value)

    def range_text(self, param: Param) -> str:
        return "range:LOW:HIGH, bytes:L, text:L or labels:[…]"

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        """The smallest universes, of one and two labels, where special cases (a count that
        determines the other) tempt a shortcut."""
        return ["range:0:0", "range:0:1"]

    def bad_values(self, param: Param) -> list[object]:
        return [
            "",
            "range:5:1",
            "range:0",
            "range:a:b",
            "bytes:-1",
            "text:x",
            "labels:[]",
            'labels:["a", "a"]',
            "labels:[true]",
            'labels:{"a": 1}',
            "no-such-universe:3",
            3,
            ["a", "b"],
        ]


@dataclass(frozen=True)
class OptionsType(ParamType):
    """Keyword parameters for another mechanism: a mapping with str keys, or the text
    ``"key=value,key=value"`` (values read by :func:`parse_value`). The mechanism they are for
    validates them."""

    name = "options"

    def coerce(self, param: Param, value: object) -> Any:
        name = param.name
        if isinstance(value, str):
            pairs = [pair.partition("=") for pair in value.split(",") if pair.strip()]
            if any(not sep or not key.strip() for key, sep, _ in pairs):
                raise BadParameter(
                    f"{name}={_shown(value)} is invalid: write key=value pairs separated by "
                    f'commas, e.g. {name}="gamma=1/1000"'
                )
            return {key.strip(): parse_value(text) for key, _, text in pairs}
        if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
            return dict(value)
        raise BadParameter(
            f"{name}={_shown(value)} is invalid: pass a dict of keyword parameters, e.g. "
            f'{name}={{"gamma": Fraction(1, 1000)}}, or the text "gamma=1/1000"'
        )

    def range_text(self, param: Param) -> str:
        return "key=value,…"

    def candidates(self, param: Param, names: Sequence[str], rng: random.Random) -> list[object]:
        """Well-formed options that name what the mechanism usually derives for the other one
        (its ε and n, larger and smaller than a case's): it must refuse them or honour them in
        its guarantee."""
        return [{"epsilon": mpq(4)}, {"epsilon": mpq(1, 4)}, {"n": 1}, {"n": 1 << 20}]

    def bad_values(self, param: Param) -> list[object]:
        return ["gamma", "=1", "gamma=1,,=2", 5, ["gamma=1"], {1: 2}, {"no_such_option": 1}]


RATIONAL = RationalType()
INTEGER = IntegerType()
BOOLEAN = BooleanType()
TEXT = TextType()
UNIVERSE = UniverseType()
OPTIONS = OptionsType()


def _inside(param: Param, value: object) -> bool:
    try:
        param.coerce(value)
    except DpplugError:
        return False
    return True


def _between(low: Rat, high: Rat, rng: random.Random) -> Rat:
    """A log-uniform rational in (low, high), 0 < low: three significant digits and then 2/3 of
    the last one, so its decimal expansion never ends (…6667), no float holds it, and rounding
    it to any number of decimals past the third digit moves it up (code that rounds a parameter
    is seen where the rounding adds budget). A test point: floats choose it, the case gets the
    exact rational."""
    x = math.exp(rng.uniform(math.log(low), math.log(high)))
    exponent = math.floor(math.log10(x)) - 2
    value = mpq(3 * round(x / 10.0**exponent) + 2, 3) * mpq(10) ** exponent
    return value if low < value < high else mpq(low + high) / 2


def _shown(value: object) -> str:
    """*value* for a message: as typed where known, and never thousands of digits long."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long for Python to write out
        return f"an integer of {int(value).bit_length()} bits"  # type: ignore[call-overload]
    return text if len(text) <= 60 else f"{text[:24]}…{text[-12:]} ({len(text)} characters)"
