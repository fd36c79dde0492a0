"""dpplug samplers through PipelineDP 0.3.1's DataFrame API (``pipeline_dp.dataframes``; Spark
DataFrames, the only kind it supports).

:class:`QueryBuilder` is PipelineDP's, building a :class:`Query` whose ``run_query`` is
PipelineDP's own on dpplug's engine (:mod:`dpplug.adapters.pipelinedp_frontends`), so
``run_query(budget, noise_kind=sampler(...))`` noises the COUNT with the dpplug sampler. PipelineDP
declares every metric column DoubleType, so the sampler's integer counts enter the DataFrame as
floats (exactly: they are far below 2^53).
"""

from __future__ import annotations

import functools
from typing import Any

from pipeline_dp import dataframes, dp_engine

from dpplug.adapters.pipelinedp_frontends import engine_bound, with_dpplug_engine


def _floats(metrics: int, row: tuple[Any, ...]) -> tuple[Any, ...]:
    return (*row[:-metrics], *(float(value) for value in row[-metrics:]))


class _SparkConverter(dataframes.SparkConverter):
    """PipelineDP's converter, with the metric values given to Spark as floats."""

    def collection_to_dataframe(self, col: Any, metric_output_columns: Any) -> Any:
        as_floats = col.map(functools.partial(_floats, len(metric_output_columns)))
        return super().collection_to_dataframe(as_floats, metric_output_columns)


def _converter(df: Any) -> Any:
    if isinstance(df, dataframes.SparkDataFrame):
        return _SparkConverter(df.sparkSession)
    return dataframes._create_dataframe_converter(df)  # PipelineDP's refusal of other kinds


class Query(dataframes.Query):
    """PipelineDP's ``Query`` on dpplug's engine."""

    run_query = engine_bound(
        dataframes.Query.run_query,
        dpeng=with_dpplug_engine(dp_engine),
        _create_dataframe_converter=_converter,
    )


class QueryBuilder(dataframes.QueryBuilder):
    """PipelineDP's ``QueryBuilder``, building dpplug's :class:`Query`."""

    build_query = engine_bound(dataframes.QueryBuilder.build_query, Query=Query)
