"""Built-in anonymized-histogram releasers (Suresh, "Differentially private anonymized
histograms", NeurIPS 2019; Hay et al. 2010; docs/mechanisms.md#anonymized-histogram-releasers)."""

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.anonymized.privhist import PrivHist
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram

RELEASERS = (PrivHist, SortedHistogram)


@hookimpl
def register_anonymized_histogram_releasers(register: Register) -> None:
    for mechanism in RELEASERS:
        register(mechanism)


__all__ = ["RELEASERS", "PrivHist", "SortedHistogram", "register_anonymized_histogram_releasers"]
