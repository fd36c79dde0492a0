"""The messages a worker sends the parent process (:mod:`.isolation`): JSON, never pickles, read
back with every field checked.

A worker runs plugin code, so what it sends is untrusted: unpickling it would let a plugin run
code in the parent, which decides and records levels. Each message is one JSON object of at most
:data:`MAX_MESSAGE` bytes:

- ``{"required": [[surface, dimension], …]}`` once the plugin has loaded (the cells its kind
  requires, :func:`.coverage.required_cells`);
- ``{"contract": {…}}`` for each contract, in the order of :data:`.runner.CONTRACTS`;
- ``{"problem": "…"}`` when the contracts cannot run or their results cannot stand (tampering);
- ``{"done": true}`` after the last.

:func:`read` turns one into a :class:`Message`, refusing anything else with ``ValueError``.
Texts are cut to :data:`MAX_TEXT` characters.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpplug.conformance.coverage import Cell, Key, Status
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.surfaces import Dimension

#: The largest message, in bytes (plot data included).
MAX_MESSAGE = 16 << 20
#: The longest text kept from a message.
MAX_TEXT = 20_000


def _plain(value: object) -> object:
    """numpy scalars and arrays as Python numbers and lists; anything else JSON cannot hold
    as its text."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, default=_plain).encode()


def required_message(required: tuple[Key, ...]) -> dict[str, Any]:
    return {"required": [[surface, dimension.value] for surface, dimension in required]}


def contract_message(result: ContractResult) -> dict[str, Any]:
    return {
        "contract": {
            "contract": result.contract,
            "outcome": result.outcome.value,
            "detail": result.detail,
            "data": result.data,
            "power": result.power,
            "weakness": result.weakness,
            "cells": [[c.surface, c.dimension.value, c.status.value, c.how] for c in result.cells],
        }
    }


@dataclass(frozen=True)
class Message:
    """One message, read: exactly one of its fields is set (``done`` is ``False`` otherwise)."""

    required: tuple[Key, ...] | None = None
    contract: ContractResult | None = None
    problem: str | None = None
    done: bool = False


def read(payload: bytes, expected_contract: str | None) -> Message:
    """The message in *payload*; a contract result must be *expected_contract*'s."""
    try:
        message = json.loads(payload)
    except ValueError as exc:
        raise ValueError("not JSON") from exc
    if not isinstance(message, dict) or len(message) != 1:
        raise ValueError("not an object of one field")
    ((field, value),) = message.items()
    if field == "required":
        return Message(required=tuple(_key(item) for item in _list(value)))
    if field == "contract":
        return Message(contract=_contract(value, expected_contract))
    if field == "problem":
        return Message(problem=_text(value))
    if field == "done" and value is True:
        return Message(done=True)
    raise ValueError(f"an unknown message {field!r}")


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("a list was expected")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("a string was expected")
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def _key(item: object) -> Key:
    surface, dimension = _list(item)
    return (_text(surface), Dimension(dimension))


def _contract(value: object, expected: str | None) -> ContractResult:
    if not isinstance(value, dict):
        raise ValueError("a contract result must be an object")
    if value.get("contract") != expected:
        raise ValueError(f"a result for {value.get('contract')!r} where {expected!r} was due")
    weakness = value.get("weakness")
    if not isinstance(weakness, int | float) or math.isnan(weakness):
        raise ValueError("a contract's weakness must be a number")
    data = value.get("data")
    if not isinstance(data, dict):
        raise ValueError("a contract's data must be an object")
    cells = []
    for item in _list(value.get("cells")):
        surface, dimension, status, how = _list(item)
        cells.append(Cell(_text(surface), Dimension(dimension), Status(status), _text(how)))
    return ContractResult(
        _text(value["contract"]),
        Outcome(_text(value.get("outcome"))),
        _text(value.get("detail")),
        data=data,
        power=_text(value.get("power")),
        weakness=float(weakness),
        cells=tuple(cells),
    )
