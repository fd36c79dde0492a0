"""Validated parameter schemas.

A mechanism class declares its parameters as a :class:`Schema` of :class:`Param` s. The registry
validates every call through it before the mechanism exists, so bad input never reaches a sampler.
Users pass ε, δ, γ, β as ``float``, ``int``, ``Fraction`` or ``mpq`` (strings from the CLI); the
schema returns exact ``mpq`` values and exact ``int`` s, and the mechanism reports the guarantee it
actually achieves from them.
"""

from __future__ import annotations

import numbers
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.exact import as_rational
from dpplug.universe import Universe, parse_universe

_REQUIRED: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter, required or with a default.

    Types: ``"rational"`` and ``"integer"`` (in an interval: ``low``/``high`` bound the value,
    ``None`` for unbounded, ``low_open``/``high_open`` make a bound strict), ``"boolean"``,
    ``"text"`` (a non-empty string, such as the name of a registered sampler), ``"universe"``
    (a :class:`dpplug.universe.Universe` or its spec text) and ``"options"`` (keyword parameters
    for another mechanism: a mapping, or text ``"key=value,key=value"``).
    ``default=None`` with ``optional=True`` means "may be left out".
    """

    name: str
    type: str
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

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED and not self.optional

    def range_text(self) -> str:
        if self.type in _TEXT_FORMS:
            return _TEXT_FORMS[self.type]
        lo = "-∞" if self.low is None else str(self.low)
        hi = "∞" if self.high is None else str(self.high)
        return f"{'(' if self.low_open or self.low is None else '['}{lo}, {hi}" + (
            ")" if self.high_open or self.high is None else "]"
        )

    def _fail(self, value: object, why: str) -> BadParameter:
        example = f", e.g. {self.name}={self.example}" if self.example else ""
        return BadParameter(
            f"{self.name}={_shown(value)} is invalid: {why}. Pass {self.name} as "
            f"{'an integer' if self.type == 'integer' else 'a number (int, float or Fraction)'} "
            f"in {self.range_text()}{example}."
        )

    def coerce(self, value: object) -> Any:
        """The exact value (``int``, ``mpq`` or ``bool``) for *value*, or :class:`BadParameter`."""
        if value is None and self.optional:
            return None
        if self.type == "text":
            if not isinstance(value, str) or not value:
                raise BadParameter(
                    f"{self.name}={_shown(value)} is invalid: pass a non-empty string."
                )
            return value
        if self.type == "universe":
            return parse_universe(value)
        if self.type == "options":
            return _options(self.name, value)
        if self.type == "boolean":
            if isinstance(value, bool | np.bool_):
                return bool(value)
            raise BadParameter(f"{self.name}={_shown(value)} is invalid: pass True or False.")
        try:
            exact = as_rational(value)
        except (TypeError, ValueError) as exc:
            raise self._fail(value, str(exc)) from None
        if self.type == "integer" and (
            not isinstance(value, numbers.Rational) or exact.denominator != 1
        ):
            raise self._fail(value, "it is not an integer")
        beyond = f" ({self.beyond})" if self.beyond else ""
        if self.low is not None and (exact < self.low or (self.low_open and exact == self.low)):
            raise self._fail(value, f"it must be {'>' if self.low_open else '≥'} {self.low}")
        if self.high is not None and (exact > self.high or (self.high_open and exact == self.high)):
            high = f"{'<' if self.high_open else '≤'} {self.high}"
            raise self._fail(value, f"it must be {high}{beyond}")
        return int(exact) if self.type == "integer" else mpq(exact)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
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


_TEXT_FORMS = {
    "boolean": "True or False",
    "text": "a name",
    "universe": "range:LOW:HIGH, bytes:L, text:L or labels:[…]",
    "options": "key=value,…",
}


class TypedFraction(Fraction):
    """An exact value read from text, shown as it was typed (``-0.5``, not ``Fraction(-1, 2)``)."""

    text: str

    def __new__(cls, text: str) -> TypedFraction:
        value = super().__new__(cls, text.strip())
        value.text = text.strip()
        return value

    def __repr__(self) -> str:
        return self.text


def parse_value(text: str) -> object:
    """A parameter value written as text: true/false, an int, an exact decimal or fraction
    ("0.5", "1/3", kept exact and shown as typed), a float ("nan"), or the text itself."""
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    try:
        if re.fullmatch(r"[+-]?\d+", text.strip()):
            return int(text)
        return TypedFraction(text)
    except ZeroDivisionError:
        pass
    except ValueError as exc:
        if "digits" in str(exc):  # Python refuses to convert integers of over 4300 digits
            raise BadParameter(
                f"a parameter value of {len(text)} characters is too long to read; numbers may "
                f"have at most {sys.get_int_max_str_digits()} digits"
            ) from None
    try:
        return float(text)
    except ValueError:
        return text


def _shown(value: object) -> str:
    """*value* for a message: as typed where known, and never thousands of digits long."""
    try:
        text = repr(value)
    except ValueError:  # an integer too long for Python to write out
        return f"an integer of {int(value).bit_length()} bits"  # type: ignore[call-overload]
    return text if len(text) <= 60 else f"{text[:24]}…{text[-12:]} ({len(text)} characters)"


def param_text(value: object) -> object:
    """A validated parameter value as JSON-friendly text that :meth:`Param.coerce` reads back:
    bools and ints as they are, universes as their spec, options as ``key=value,…``, exact
    rationals as ``"p/q"``."""
    if isinstance(value, bool | int):
        return value
    if isinstance(value, Universe):
        return value.spec
    if isinstance(value, Mapping):
        return ",".join(f"{k}={param_text(v)}" for k, v in value.items())
    return str(value)


def params_from_text(texts: Mapping[str, object]) -> dict[str, object]:
    """Parameters written by :func:`param_text` (or typed as text), ready for a schema."""
    return {k: parse_value(v) if isinstance(v, str) else v for k, v in texts.items()}


def _options(name: str, value: object) -> dict[str, object]:
    """Keyword parameters for another mechanism, from a mapping or ``"key=value,key=value"``."""
    if isinstance(value, str):
        pairs = [pair.partition("=") for pair in value.split(",") if pair.strip()]
        if any(not sep or not key.strip() for key, sep, _ in pairs):
            raise BadParameter(
                f"{name}={_shown(value)} is invalid: write key=value pairs separated by commas, "
                f'e.g. {name}="gamma=1/1000"'
            )
        return {key.strip(): parse_value(text) for key, _, text in pairs}
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return dict(value)
    raise BadParameter(
        f"{name}={_shown(value)} is invalid: pass a dict of keyword parameters, e.g. "
        f'{name}={{"gamma": Fraction(1, 1000)}}, or the text "gamma=1/1000"'
    )


def epsilon_param(doc: str, high: int = 64, low: Any = 0) -> Param:
    """The ε parameter of a mechanism: a rational in (low, high] (low excluded only when 0)."""
    return Param("epsilon", "rational", doc, low=low, low_open=low == 0, high=high, example="0.5")


def count_bound_param(optional: bool = False, high: int = 1 << 62, beyond: str = "") -> Param:
    """n: the largest true count the mechanism accepts (BV's counting-query domain [0, n]);
    *beyond* says what to use for a larger n."""
    return Param(
        "n",
        "integer",
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
