"""The levels a run can require of every plugin (``dpplug conform --require LEVEL``, ``pytest
--dpplug --dpplug-require LEVEL``), weakest first, and whether a level falls short of one.
Imports nothing, so that both front ends can offer the choices before loading the suite."""

from __future__ import annotations

#: The levels a run can require, weakest first (``Level`` values).
REQUIRABLE = ("declared", "audited", "exactly verified")


def falls_short(level: str, required: str | None) -> bool:
    """Whether a plugin at *level* misses the *required* one (never, when none is required);
    ``failed`` and ``none`` miss every level."""
    if required is None:
        return False
    rank = {name: i for i, name in enumerate(REQUIRABLE)}
    return rank.get(level, -1) < rank[required]
