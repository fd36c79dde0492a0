"""The histogram-releaser kind (:mod:`.base`), what its releasers return (:mod:`.outputs`), and
the exact laws of their releases on tiny cases (:mod:`.release_law`, :mod:`.compact_law`)."""

from dpplug.kinds.histogram_releaser.base import (
    HISTOGRAM_RELEASER,
    HistogramReleaser,
    TrueCounts,
    register_histogram_releasers,
)
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    EmptyBinLaw,
    SparseHistogram,
)

__all__ = [
    "HISTOGRAM_RELEASER",
    "CompactHistogram",
    "DenseHistogram",
    "EmptyBinLaw",
    "HistogramReleaser",
    "SparseHistogram",
    "TrueCounts",
    "register_histogram_releasers",
]
