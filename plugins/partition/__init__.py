"""Built-in partition selectors (Desfontaines, Voss, Gipson, Mandayam, "Differentially private
partition selection", PoPETs 2022; docs/mechanisms.md#partition-selectors)."""

from dpplug.hookspecs import Register, hookimpl
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


@hookimpl
def register_partition_selectors(register: Register) -> None:
    for mechanism in SELECTORS:
        register(mechanism)


__all__ = [
    "SELECTORS",
    "GaussianThresholding",
    "LaplaceThresholding",
    "OptimalPartitionSelection",
    "TruncatedGeometricThresholding",
    "register_partition_selectors",
]
