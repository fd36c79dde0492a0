"""dpplug specs through PipelineDP 0.3.1's Spark front end (``pipeline_dp.private_spark``).

:func:`make_private` gives a :class:`PrivateRDD`: PipelineDP's, whose aggregations run dpplug's
engine (:mod:`dpplug.adapters.pipelinedp_frontends`), so ``count`` and ``privacy_id_count`` take
``noise_kind=sampler(...)`` in their params; ``select_partitions`` passes its params whole (so a
``partition_selection(...)`` strategy, ``pre_threshold`` and ``budget_weight`` take effect:
PipelineDP's own passes on only ``max_partitions_contributed``), and :meth:`PrivateRDD.release`
runs a :func:`~dpplug.adapters.pipelinedp.central_release` (histogram releasers) on it.
``map`` and ``flat_map`` keep the result a dpplug ``PrivateRDD``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pipeline_dp
from pipeline_dp import private_spark

from dpplug.adapters.pipelinedp import DPEngine, PluginSpec
from dpplug.adapters.pipelinedp_frontends import (
    element_extractors,
    engine_bound,
    with_dpplug_engine,
)

_PIPELINE_DP = with_dpplug_engine(pipeline_dp)


def make_private(
    rdd: Any, budget_accountant: Any, privacy_id_extractor: Callable[[Any], Any] | None
) -> PrivateRDD:
    """PipelineDP's ``make_private``, giving dpplug's :class:`PrivateRDD`."""
    return PrivateRDD(rdd, budget_accountant, privacy_id_extractor)


class PrivateRDD(private_spark.PrivateRDD):
    """PipelineDP's ``PrivateRDD`` on dpplug's engine (see the module docstring)."""

    map = engine_bound(private_spark.PrivateRDD.map, make_private=make_private)
    flat_map = engine_bound(private_spark.PrivateRDD.flat_map, make_private=make_private)
    count = engine_bound(private_spark.PrivateRDD.count, pipeline_dp=_PIPELINE_DP)
    privacy_id_count = engine_bound(
        private_spark.PrivateRDD.privacy_id_count, pipeline_dp=_PIPELINE_DP
    )
    sum = engine_bound(private_spark.PrivateRDD.sum, pipeline_dp=_PIPELINE_DP)
    mean = engine_bound(private_spark.PrivateRDD.mean, pipeline_dp=_PIPELINE_DP)
    variance = engine_bound(private_spark.PrivateRDD.variance, pipeline_dp=_PIPELINE_DP)

    def _engine(self) -> DPEngine:
        backend = pipeline_dp.SparkRDDBackend(self._rdd.context)
        return DPEngine(self._budget_accountant, backend)

    def select_partitions(
        self, select_partitions_params: Any, partition_extractor: Callable[[Any], Any]
    ) -> Any:
        """The partition keys kept by ``select_partitions_params`` (whole, with its strategy,
        ``pre_threshold`` and ``budget_weight``)."""
        return self._engine().select_partitions(
            self._rdd, select_partitions_params, element_extractors(partition_extractor)
        )

    def release(self, spec: PluginSpec, partition_extractor: Callable[[Any], Any]) -> Any:
        """A one-element RDD with what the mechanism of *spec* (``central_release(...)``)
        releases from the labels *partition_extractor* reads from each element."""
        return self._engine().release(self._rdd, spec, element_extractors(partition_extractor))
