"""Built-in counting-query samplers (Balcer–Vadhan §4; Desfontaines et al. Def. 6–7)."""

from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.fastsample import FastSample
from dpplug.plugins.samplers.fixedpoint_geometric import FixedPointGeometric
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric

SAMPLERS = (GeoSample, FastSample, FixedPointGeometric, TruncatedGeometric, DiscreteLaplace)

__all__ = [
    "SAMPLERS",
    "DiscreteLaplace",
    "FastSample",
    "FixedPointGeometric",
    "GeoSample",
    "TruncatedGeometric",
]
