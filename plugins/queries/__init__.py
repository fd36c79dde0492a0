"""Built-in query releasers (Blum & Roth, "Fast Private Data Release Algorithms for Sparse
Queries", RANDOM 2013; docs/mechanisms.md#query-releasers)."""

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.queries.independent import IndependentLaplace
from dpplug.plugins.queries.projection import SparseProjectionReleaser
from dpplug.plugins.queries.sparse_mw import SparseMultiplicativeWeights

RELEASERS = (SparseMultiplicativeWeights, SparseProjectionReleaser, IndependentLaplace)


@hookimpl
def register_query_releasers(register: Register) -> None:
    for mechanism in RELEASERS:
        register(mechanism)


__all__ = [
    "RELEASERS",
    "IndependentLaplace",
    "SparseMultiplicativeWeights",
    "SparseProjectionReleaser",
    "register_query_releasers",
]
