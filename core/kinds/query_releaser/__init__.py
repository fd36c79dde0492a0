"""The query-releaser kind (:mod:`.base`): queries, workloads and sessions (:mod:`.queries`), the
non-interactive random projection (:mod:`.projections`), and the structures its releasers may
declare for exact verification (:mod:`.sparse_vector`, :mod:`.coordinate_noise`,
:mod:`.polynomial_law`)."""

from dpplug.kinds.query_releaser.base import (
    QUERY_RELEASER,
    QueryReleaser,
    register_query_releasers,
)
from dpplug.kinds.query_releaser.histogram_queries import HistogramQueries
from dpplug.kinds.query_releaser.projections import SparseProjection
from dpplug.kinds.query_releaser.queries import (
    LabelCounts,
    QueryAnswers,
    QuerySession,
    SparseQuery,
    Workload,
)

__all__ = [
    "QUERY_RELEASER",
    "HistogramQueries",
    "LabelCounts",
    "QueryAnswers",
    "QueryReleaser",
    "QuerySession",
    "SparseProjection",
    "SparseQuery",
    "Workload",
    "register_query_releasers",
]
