"""The budget dimension (:class:`~dpplug.surfaces.Dimension.BUDGET`): a mechanism spends the
budget it was asked for, never more.

The budget asked for is the mechanism's ``epsilon`` and ``delta`` parameters, as the frameworks
pass them (an OpenDP Context's or a PipelineDP accountant's share goes into them): the declared
guarantee, which the exact checks hold the code to, must have e^ε̃ ≤ e^ε and δ̃ ≤ δ, decided
exactly by :func:`dpplug.guarantee.within_budget`, the comparison the adapters refuse plugins
with. A guarantee above the budget is a failure however honest its declaration: a framework
that granted ε would spend more.
"""

from __future__ import annotations

import math
from typing import Any

from gmpy2 import mpq

from dpplug.conformance.divergence import exact_text
from dpplug.guarantee import within_budget
from dpplug.mechanism import Mechanism


def asked(mechanism: Mechanism) -> tuple[Any, Any]:
    """The (ε, δ) the mechanism was asked for: its ``epsilon`` and ``delta`` parameters (None
    where it has no such parameter or it was left to the mechanism)."""
    return mechanism.params.get("epsilon"), mechanism.params.get("delta")


def budget_problem(mechanism: Mechanism) -> str | None:
    """What is above the budget asked for, in words, or None."""
    epsilon, delta = asked(mechanism)
    guarantee = mechanism.guarantee
    if epsilon is not None and not within_budget(guarantee, epsilon, math.inf):
        return (
            f"asked for ε = {exact_text(mpq(epsilon))}, it declares e^ε̃ = "
            f"{exact_text(guarantee.exp_epsilon)} > e^ε (ε̃ ≈ {guarantee.epsilon:.6g}): it spends "
            "more than it was granted"
        )
    if delta is not None and guarantee.delta > mpq(delta):
        return (
            f"asked for δ = {exact_text(mpq(delta))}, it declares δ̃ = "
            f"{exact_text(guarantee.delta)}: it spends more than it was granted"
        )
    return None
