"""What the built-in set unions share: their common parameters and the program of one served
round of keep decisions."""

from __future__ import annotations

from gmpy2 import mpq

from dpplug.kinds.set_union_selector.keep_draws import Keeps
from dpplug.param_types import BOOLEAN, INTEGER
from dpplug.params import Param, epsilon_param, probability_param
from dpplug.program import Program

#: The largest Δ₀ (the appearing bound takes one tail per item count).
MAX_ITEMS = 1 << 10

COMMON_PARAMS = (
    epsilon_param("ε of the whole set union.", high=16, low=mpq(1, 16)),
    probability_param("delta", "δ of the whole set union.", low=mpq(1, 1 << 40), high=mpq(1, 2)),
    Param(
        "max_partitions_contributed",
        INTEGER,
        "Δ₀: each unit keeps at most this many of its labels (a uniform choice).",
        low=1,
        high=MAX_ITEMS,
        default=1,
    ),
    Param(
        "replace_one",
        BOOLEAN,
        "Neighbours replace one unit (calibrated for two units changed) instead of adding or "
        "removing one.",
        default=False,
    ),
)


def one_draw(draw: Keeps) -> Program[tuple[bool, ...]]:
    """The program of one round: its keep decisions, served (:func:`dpplug.program.run`)."""
    keeps: tuple[bool, ...] = yield draw
    return keeps
