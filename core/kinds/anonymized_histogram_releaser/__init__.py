"""The anonymized-histogram-releaser kind (:mod:`.base`) and what its releasers return
(:mod:`.outputs`)."""

from dpplug.kinds.anonymized_histogram_releaser.base import (
    ANONYMIZED_HISTOGRAM_RELEASER,
    AccuracyScope,
    AnonymizedHistogramReleaser,
    Prevalences,
    register_anonymized_histogram_releasers,
)
from dpplug.kinds.anonymized_histogram_releaser.outputs import (
    AnonymizedHistogram,
    Estimate,
    sorted_l1,
)

__all__ = [
    "ANONYMIZED_HISTOGRAM_RELEASER",
    "AccuracyScope",
    "AnonymizedHistogram",
    "AnonymizedHistogramReleaser",
    "Estimate",
    "Prevalences",
    "register_anonymized_histogram_releasers",
    "sorted_l1",
]
