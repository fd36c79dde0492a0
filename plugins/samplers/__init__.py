"""Built-in counting-query samplers (Balcer–Vadhan §4; Desfontaines et al. Def. 6–7)."""

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.samplers.discrete_gaussian import DiscreteGaussian
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.fastsample import FastSample
from dpplug.plugins.samplers.fixedpoint_geometric import FixedPointGeometric
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.plugins.samplers.oblivious_laplace import ObliviousLaplace
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric

SAMPLERS = (
    GeoSample,
    FastSample,
    FixedPointGeometric,
    TruncatedGeometric,
    DiscreteLaplace,
    DiscreteGaussian,
    ObliviousLaplace,
)


@hookimpl
def register_samplers(register: Register) -> None:
    for mechanism in SAMPLERS:
        register(mechanism)


__all__ = [
    "SAMPLERS",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "FastSample",
    "FixedPointGeometric",
    "GeoSample",
    "ObliviousLaplace",
    "TruncatedGeometric",
    "register_samplers",
]
