"""The surface × dimension matrix (:mod:`dpplug.surfaces`): which cells a run covered, how, and
which it could not reach.

Every check a contract makes on a surface along a dimension reports a :class:`Cell`: its status
(:class:`Status`: checked exactly, on samples, or by a deterministic check, or not reachable and
why) and one line saying how. A plugin's matrix (:func:`matrix`) keeps, per cell, the strongest
report of any contract; the cells its kind requires of it (:func:`required_cells`: every
dimension of every surface that applies to the mechanism) and were not covered are listed by
:func:`uncovered`, and a plugin with any reaches "audited" at most
(:class:`~dpplug.conformance.results.Level`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dpplug.mechanism import Mechanism
from dpplug.surfaces import Dimension


class Status(StrEnum):
    """How a cell was covered (the first three), or that it was not."""

    #: The code's law compared exactly with the declared one (or a declared quantity proved).
    EXACT = "exact"
    #: A deterministic check on the calls made (types, fields, the caller's data, the budget).
    CHECKED = "checked"
    #: A statistical test on samples, at the contract's stated power.
    SAMPLED = "sampled"
    #: Not reached: the reason is the cell's ``how``.
    INFEASIBLE = "infeasible"


_STRENGTH = {Status.EXACT: 3, Status.CHECKED: 2, Status.SAMPLED: 1, Status.INFEASIBLE: 0}

Key = tuple[str, Dimension]


@dataclass(frozen=True)
class Cell:
    """One check of one surface along one dimension: its status and how, in one line."""

    surface: str
    dimension: Dimension
    status: Status
    how: str

    @property
    def key(self) -> Key:
        return (self.surface, self.dimension)

    @property
    def covered(self) -> bool:
        return self.status is not Status.INFEASIBLE

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "how": self.how}


def cell(surface: str, dimension: Dimension, status: Status, how: str) -> Cell:
    """A :class:`Cell` (shorthand for the contracts)."""
    return Cell(surface, dimension, status, how)


def matrix(cells: Iterable[Cell]) -> dict[Key, Cell]:
    """The strongest report of each cell (the first of equal strength)."""
    best: dict[Key, Cell] = {}
    for found in cells:
        known = best.get(found.key)
        if known is None or _STRENGTH[found.status] > _STRENGTH[known.status]:
            best[found.key] = found
    return best


def required_cells(mechanism: Mechanism) -> tuple[Key, ...]:
    """Every dimension of every surface of the mechanism's kind that applies to it."""
    return tuple(
        (surface.name, dimension)
        for surface in mechanism.kind.surfaces_of(mechanism)
        for dimension in surface.dimensions
    )


def uncovered(required: Iterable[Key], cells: dict[Key, Cell]) -> list[Key]:
    """The required cells no contract covered (missing, or only infeasible)."""
    return [key for key in required if key not in cells or not cells[key].covered]
