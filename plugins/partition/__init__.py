"""Built-in partition selectors (Desfontaines, Voss, Gipson, Mandayam 2020)."""

from dpplug.plugins.partition.gaussian import GaussianThresholding
from dpplug.plugins.partition.laplace import LaplaceThresholding
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.plugins.partition.truncated_geometric_thresholding import (
    TruncatedGeometricThresholding,
)

SELECTORS = (
    OptimalPartitionSelection,
    TruncatedGeometricThresholding,
    LaplaceThresholding,
    GaussianThresholding,
)

__all__ = [
    "SELECTORS",
    "GaussianThresholding",
    "LaplaceThresholding",
    "OptimalPartitionSelection",
    "TruncatedGeometricThresholding",
]
