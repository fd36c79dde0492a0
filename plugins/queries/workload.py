"""The parameters every built-in query releaser shares, and what they set on the mechanism.

Blum & Roth ("Fast Private Data Release Algorithms for Sparse Queries", RANDOM 2013) state their
guarantees for a dataset of n rows (public), ε and δ, and their accuracy (α, β) for k queries of
sparsity m; here the weights' grid W (:mod:`dpplug.kinds.query_releaser.queries`) is a parameter
too. The schemas are bounded so that every call within them finishes in bounded time and memory.
Every releaser composes its steps to a loss slightly below the ε asked for and declares a rational
bound on e^ε that is at most e^ε (:func:`declared_loss`), so a compositor whose share is exactly
the ε asked for accepts it.
"""

from __future__ import annotations

from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq

from dpplug.errors import BadParameter
from dpplug.guarantee import MAX_BUDGET_BITS, Guarantee, Neighbouring, Relation, within_budget
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.queries import Workload
from dpplug.param_types import INTEGER, UNIVERSE
from dpplug.params import Param, epsilon_param, probability_param

#: Blum & Roth's relation (Def. 2.5): one row added or removed, n public (n bounds the rows).
ADD_REMOVE_ROW = Neighbouring(Relation.ADD_REMOVE)
#: The largest public n.
MAX_ROWS = 1 << 40
#: The largest grid W (weights w/W with w < 2^32).
MAX_GRID = 1 << 32
#: How much below the ε asked for a releaser composes its steps: a relative 2^-10 (GeoSample
#: spends down to 63/64 of its ε). Small denominators keep the steps simple: ε = 4 over k = 4
#: answers is ε₀ = 1023/1024, whose noise scale W/ε₀ has the small numerator 4096 at W = 4
#: (the exact sampler draws a uniform of that size, which the conformance suite replays).
RUN_BELOW = mpq(1, 1 << 10)


def declared_loss(epsilon: Any) -> tuple[Any, Any]:
    """(ε₁, L) for a releaser asked for ε: it composes its steps to at most ε₁ = ε·(1 − 2^-10)
    and declares the rational L as its bound on e^ε, with e^{ε₁} ≤ L ≤ e^ε, so that the loss it
    declares is at or below the one asked for (rounding e^ε up, as a bound on the composed ε
    alone would, declares slightly more). L is e^{ε₁} rounded up at the first precision from 128
    bits (doubling) at which it is at most e^ε, which :func:`dpplug.guarantee.within_budget`
    decides exactly; an ε too small for that within :data:`~dpplug.guarantee.MAX_BUDGET_BITS`
    bits is refused."""
    run = mpq(epsilon) * (1 - RUN_BELOW)
    bits = 128
    while bits <= MAX_BUDGET_BITS:
        with gmpy2.context(gmpy2.get_context(), precision=bits, round=gmpy2.RoundUp):
            bound = mpq(gmpy2.exp(mpfr(run)))
        if within_budget(Guarantee(bound, 0, ADD_REMOVE_ROW), epsilon):
            return run, bound
        bits *= 2
    raise BadParameter(
        f"epsilon={float(epsilon):.3g} is too small to declare a loss below it; pass a larger ε"
    )


def universe_param(required: bool) -> Param:
    """The public universe: required (the projection hashes universe indices) or optional."""
    doc = "The public label set: range:LOW:HIGH, bytes:L, text:L or labels:[…]."
    if required:
        return Param("universe", UNIVERSE, doc, example='"bytes:16"')
    return Param(
        "universe",
        UNIVERSE,
        doc + " Leave out for any str, bytes or int label (no universe at all).",
        optional=True,
    )


def delta_param(zero: bool) -> Param:
    """δ in (0, 1/2], or in [0, 1/2] with default 0 (pure DP) if *zero*."""
    doc = "Total δ for one row added or removed."
    if zero:
        return probability_param(
            "delta",
            doc + " 0 (the default) means pure DP by basic composition.",
            high=mpq(1, 2),
            default=0,
        )
    return probability_param("delta", doc, high=mpq(1, 2))


def releaser_params(universe_required: bool, delta_zero: bool) -> tuple[Param, ...]:
    """universe, n, epsilon, delta, max_queries, sparsity, grid and beta, in that order; δ = 0
    allowed only if *delta_zero*."""
    return (
        universe_param(universe_required),
        Param(
            "n",
            INTEGER,
            "The public bound on rows (Blum & Roth's dataset size n); answers are (1/n)·Σ_rows Q.",
            low=1,
            high=MAX_ROWS,
            example="10000",
        ),
        epsilon_param("Total ε for one row added or removed, over the whole workload.", high=16),
        delta_param(delta_zero),
        Param(
            "max_queries",
            INTEGER,
            "k: the number of queries the guarantee and the accuracy cover.",
            low=1,
            high=10**9,
            example="1000",
        ),
        Param(
            "sparsity",
            INTEGER,
            "m: the most labels a query may give a positive weight.",
            low=1,
            high=10**6,
            example="10",
        ),
        Param(
            "grid",
            INTEGER,
            "W: query weights are rounded to the nearest multiple of 1/W.",
            low=1,
            high=MAX_GRID,
            default=1 << 16,
        ),
        probability_param(
            "beta",
            "Failure probability of the accuracy each release declares (all k answers within α "
            "at once).",
            high=mpq(1, 2),
            default=mpq(1, 20),
        ),
    )


def set_public(mechanism: QueryReleaser, params: dict[str, Any]) -> None:
    """n, universe, workload and beta from the validated *params*."""
    mechanism.n = params["n"]
    mechanism.universe = params["universe"]
    mechanism.workload = Workload(params["max_queries"], params["sparsity"], params["grid"])
    mechanism.beta = params["beta"]
