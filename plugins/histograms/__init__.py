"""Built-in histogram releasers (Balcer–Vadhan §5–8; MECHANISMS.md A6–A14)."""

from dpplug.plugins.histograms.basic import BasicHistogram
from dpplug.plugins.histograms.compact import CompactHistogram
from dpplug.plugins.histograms.pure_sparse import PureSparseHistogram
from dpplug.plugins.histograms.stability import StabilityHistogram

RELEASERS = (BasicHistogram, StabilityHistogram, PureSparseHistogram, CompactHistogram)

__all__ = [
    "RELEASERS",
    "BasicHistogram",
    "CompactHistogram",
    "PureSparseHistogram",
    "StabilityHistogram",
]
