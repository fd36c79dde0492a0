"""Built-in histogram releasers (Balcer & Vadhan, "Differential Privacy on Finite Computers",
§5–8; docs/mechanisms.md#histogram-releasers)."""

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.histograms.blanket import BlanketSparseHistogramReleaser
from dpplug.plugins.histograms.compact import CompactHistogramReleaser
from dpplug.plugins.histograms.pure_sparse import PureSparseHistogramReleaser
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser

RELEASERS = (
    BasicHistogramReleaser,
    StabilityHistogramReleaser,
    PureSparseHistogramReleaser,
    CompactHistogramReleaser,
    BlanketSparseHistogramReleaser,
)


@hookimpl
def register_histogram_releasers(register: Register) -> None:
    for mechanism in RELEASERS:
        register(mechanism)


__all__ = [
    "RELEASERS",
    "BasicHistogramReleaser",
    "BlanketSparseHistogramReleaser",
    "CompactHistogramReleaser",
    "PureSparseHistogramReleaser",
    "StabilityHistogramReleaser",
    "register_histogram_releasers",
]
