"""The partition-selector kind (:mod:`.base`) and the Gaussian DP its ℓ₂-composed selectors
declare (:mod:`.gaussian_dp`)."""

from dpplug.kinds.partition_selector.base import (
    PARTITION_SELECTOR,
    PartitionSelector,
    Selection,
    register_partition_selectors,
)
from dpplug.kinds.partition_selector.gaussian_dp import GaussianPairs

__all__ = [
    "PARTITION_SELECTOR",
    "GaussianPairs",
    "PartitionSelector",
    "Selection",
    "register_partition_selectors",
]
