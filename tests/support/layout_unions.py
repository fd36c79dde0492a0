"""Set unions whose distributed layout is easy to get wrong, for the PipelineDP adapter's tests
(tests/adapters/test_set_union_routes.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from gmpy2 import mpq

from dpplug.param_types import INTEGER, RATIONAL
from dpplug.params import Param, Schema
from dpplug.plugins.set_union.common import COMMON_PARAMS
from dpplug.plugins.set_union.weighted import DpSips
from dpplug.randomness import RandomSource

from support.kind_hooks import kind_hooks


class OneRoundByDefault(DpSips):
    """DP-SIPS whose schema defaults to one round, while the ``pipeline_rounds`` it inherits
    once said 3 when ``rounds`` was left out (red team J): the rounds a pipeline lays out come
    from the complete parameters, so one round is run. Records the rounds it decides."""

    name = "test-sips-one-round-by-default"
    schema = Schema(
        (
            *COMMON_PARAMS,
            Param("rounds", INTEGER, "How many rounds.", low=1, high=8, default=1),
            Param("budget_ratio", RATIONAL, "Share ratio.", low=mpq(1, 4), high=8, default=2),
        )
    )
    decided: ClassVar[list[int]] = []

    def round_keep(self, round_index: int, total: int, source: RandomSource) -> bool:
        self.decided.append(round_index)
        return super().round_keep(round_index, total, source)


class RoundsByBudget(DpSips):
    """DP-SIPS taking three rounds from ε = 1 and two below: a pipeline laid out at the trial
    budget (ε = 1) has the wrong rounds for a smaller grant, which the adapter refuses."""

    name = "test-sips-rounds-by-budget"

    @classmethod
    def pipeline_rounds(cls, params: Mapping[str, Any]) -> int:
        return 3 if params["epsilon"] >= 1 else 2

    def _rounds(self) -> int:
        return type(self).pipeline_rounds(self.params)


(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((OneRoundByDefault, RoundsByBudget))
