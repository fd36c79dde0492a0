"""Turning a selector's (ε, δ) into what one partition may spend, and back (Desfontaines et al.
§5; docs/mechanisms.md#contributions-to-several-partitions-and-bounded-dp).

A privacy unit contributes to at most ℓ₀ partitions (``max_partitions_contributed``); under
bounded DP (``replace_one``) replacing a unit changes up to 2ℓ₀ partitions. Partitions are
independent coordinates, so each may spend ε_c = ε/c and δ_c = 1 − (1 − δ)^{1/c} for c such
coordinates, and c coordinates of (ε_c, δ_c) compose to (c·ε_c, 1 − (1 − δ_c)^c), the tight
composition of independent (ε_c, δ_c) releases (verified exactly for c = 2, 3 in
tests/plugins/partition/test_selector_privacy.py).

Everything is exact: e^{ε_c} is rounded down to a dyadic rational L_c and δ_c is rounded down, so
the declared guarantee (L_c^c, 1 − (1 − δ̂_c)^c), with δ̂_c the per-partition δ actually achieved,
is at most the (ε, δ) asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq

from dpplug.exact import exp_lower
from dpplug.guarantee import Guarantee, Neighbouring, Relation
from dpplug.param_types import BOOLEAN, INTEGER
from dpplug.params import Param, epsilon_param, probability_param

#: Bits of the dyadic rounding of e^{ε_c}.
EXP_BITS = 48

SELECTOR_PARAMS = (
    epsilon_param(
        "ε of the whole selection (over the partitions one unit can touch).", low=mpq(1, 1 << 10)
    ),
    probability_param("delta", "δ of the whole selection.", low=mpq(1, 1 << 60)),
    Param(
        "max_partitions_contributed",
        INTEGER,
        "ℓ₀: how many partitions one privacy unit may contribute to (bound it before selecting).",
        low=1,
        high=1 << 12,
        default=1,
    ),
    Param(
        "pre_threshold",
        INTEGER,
        "Drop partitions with fewer than this many units before selecting (1: no pre-threshold).",
        low=1,
        high=1 << 30,
        default=1,
    ),
    Param(
        "replace_one",
        BOOLEAN,
        "Bounded DP: neighbours replace one unit (2ℓ₀ partitions change) instead of adding or "
        "removing one.",
        default=False,
    ),
)


def _root_complement_lower(delta: Any, c: int) -> Any:
    """A rational lower bound on 1 − (1 − δ)^{1/c} (exact for c = 1)."""
    if c == 1:
        return mpq(delta)
    with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundUp):
        root = mpq(gmpy2.root(mpfr(1 - mpq(delta)), c))
    return 1 - root


@dataclass(frozen=True)
class Budget:
    """Per-partition exact budget and the relation the whole selection is stated for."""

    coordinates: int
    exp_epsilon: Any  # L_c ≤ e^{ε/c}
    delta: Any  # δ_c ≤ 1 − (1 − δ)^{1/c}
    neighbouring: Neighbouring

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Budget:
        l0, replace = params["max_partitions_contributed"], params["replace_one"]
        coordinates = l0 * (2 if replace else 1)
        relation = Relation.REPLACE_ONE if replace else Relation.ADD_REMOVE
        return cls(
            coordinates,
            exp_lower(params["epsilon"] / coordinates, EXP_BITS),
            _root_complement_lower(params["delta"], coordinates),
            Neighbouring(relation, max_partitions=l0, max_contributions=1),
        )

    @classmethod
    def joint(cls, params: dict[str, Any]) -> Budget:
        """The whole (ε, δ) for every partition, for selectors whose guarantee is proven for the
        partitions together (Gaussian thresholding: the per-partition table is capped at the
        whole e^ε and δ, which any single partition's release must meet anyway)."""
        split = cls.from_params(params)
        return cls(
            split.coordinates,
            exp_lower(params["epsilon"], EXP_BITS),
            mpq(params["delta"]),
            split.neighbouring,
        )

    def compose(self, per_partition: Guarantee) -> Guarantee:
        """The whole selection's guarantee from what one partition actually achieves."""
        c = self.coordinates
        return Guarantee(
            per_partition.exp_epsilon**c, 1 - (1 - per_partition.delta) ** c, self.neighbouring
        )
