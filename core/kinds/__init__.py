"""The kinds of mechanism, one package each: base class, hookspec, relations, what its releases
are, and what the registry, the conformance suite and the adapters need
(:class:`dpplug.kind.Kind`).

``KINDS`` lists them in the order the registry calls their hooks; ``docs/adding-a-kind.md`` says
how to add one. The kinds' public names are re-exported here.
"""

from dpplug.kind import Kind
from dpplug.kinds.anonymized_histogram_releaser import (
    ANONYMIZED_HISTOGRAM_RELEASER,
    AccuracyScope,
    AnonymizedHistogram,
    AnonymizedHistogramReleaser,
    Estimate,
    Prevalences,
    sorted_l1,
)
from dpplug.kinds.histogram_releaser import (
    HISTOGRAM_RELEASER,
    CompactHistogram,
    DenseHistogram,
    HistogramReleaser,
    SparseHistogram,
    TrueCounts,
)
from dpplug.kinds.partition_selector import PARTITION_SELECTOR, PartitionSelector, Selection
from dpplug.kinds.query_releaser import (
    QUERY_RELEASER,
    HistogramQueries,
    QueryAnswers,
    QueryReleaser,
    QuerySession,
    SparseProjection,
    SparseQuery,
    Workload,
)
from dpplug.kinds.sampler import SAMPLER, UNBOUNDED_COUNT, CountingQuerySampler
from dpplug.kinds.set_union_selector import SET_UNION_SELECTOR, SetUnionSelector

KINDS: tuple[Kind, ...] = (
    SAMPLER,
    PARTITION_SELECTOR,
    HISTOGRAM_RELEASER,
    ANONYMIZED_HISTOGRAM_RELEASER,
    QUERY_RELEASER,
    SET_UNION_SELECTOR,
)

__all__ = [
    "ANONYMIZED_HISTOGRAM_RELEASER",
    "HISTOGRAM_RELEASER",
    "KINDS",
    "PARTITION_SELECTOR",
    "QUERY_RELEASER",
    "SAMPLER",
    "SET_UNION_SELECTOR",
    "UNBOUNDED_COUNT",
    "AccuracyScope",
    "AnonymizedHistogram",
    "AnonymizedHistogramReleaser",
    "CompactHistogram",
    "CountingQuerySampler",
    "DenseHistogram",
    "Estimate",
    "HistogramQueries",
    "HistogramReleaser",
    "Kind",
    "PartitionSelector",
    "Prevalences",
    "QueryAnswers",
    "QueryReleaser",
    "QuerySession",
    "Selection",
    "SetUnionSelector",
    "SparseHistogram",
    "SparseProjection",
    "SparseQuery",
    "TrueCounts",
    "Workload",
    "sorted_l1",
]
