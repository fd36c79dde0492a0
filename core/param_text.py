"""Parameters as text: what the command line and the written formats (JSON headers of releases
and declarations) read and write.

:func:`parse_value` reads one value typed as text, keeping decimals and fractions exact;
:func:`param_text` writes a validated value so that the parameter's type reads it back.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from fractions import Fraction

from dpplug.errors import BadParameter
from dpplug.universe import Universe


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


def param_text(value: object) -> object:
    """A validated parameter value as JSON-friendly text that the parameter's type reads back
    (:meth:`~dpplug.params.Param.coerce`): bools and ints as they are, universes as their spec,
    options as ``key=value,…``, exact rationals as ``"p/q"``."""
    if isinstance(value, bool | int):
        return value
    if isinstance(value, Universe):
        return value.spec
    if isinstance(value, Mapping):
        return ",".join(f"{k}={param_text(v)}" for k, v in value.items())
    return str(value)


def params_text(params: Mapping[str, object]) -> dict[str, object]:
    """Set parameters (those not ``None``) as :func:`param_text` writes them, by name: what a
    release, a command's output or a spec records of the mechanism that made it."""
    return {k: param_text(v) for k, v in params.items() if v is not None}


def params_from_text(texts: Mapping[str, object]) -> dict[str, object]:
    """Parameters written by :func:`param_text` (or typed as text), ready for a schema."""
    return {k: parse_value(v) if isinstance(v, str) else v for k, v in texts.items()}
