"""dpplug samplers through PipelineDP 0.3.1's DataFrame API (``pipeline_dp.dataframes``; Spark
DataFrames, the only kind it supports).

:class:`QueryBuilder` is PipelineDP's, building a :class:`Query` whose ``run_query`` is
PipelineDP's own on dpplug's engine (:mod:`dpplug.adapters.pipelinedp_frontends`), so
``run_query(budget, noise_kind=sampler(...))`` noises the COUNT with the dpplug sampler. PipelineDP
declares every metric column DoubleType, and the engine's noisy counts are floats as PipelineDP's
own are (exact integers below 2^53), so PipelineDP's own ``Query`` takes them too.
:func:`release` runs a central release (histogram releasers) on a DataFrame's label column, which
PipelineDP's DataFrame API has no operation for.
"""

from __future__ import annotations

import operator
from typing import Any

import pipeline_dp
from pipeline_dp import dataframes, dp_engine

from dpplug.adapters.pipelinedp import DPEngine, PluginSpec
from dpplug.adapters.pipelinedp_frontends import engine_bound, with_dpplug_engine


class Query(dataframes.Query):
    """PipelineDP's ``Query`` on dpplug's engine."""

    run_query = engine_bound(dataframes.Query.run_query, dpeng=with_dpplug_engine(dp_engine))


class QueryBuilder(dataframes.QueryBuilder):
    """PipelineDP's ``QueryBuilder``, building dpplug's :class:`Query`."""

    build_query = engine_bound(dataframes.QueryBuilder.build_query, Query=Query)


def release(
    df: Any, privacy_unit_column: str, label_column: str, spec: PluginSpec, budget: Any
) -> Any:
    """What the mechanism of *spec* (``central_release(...)``) releases from the labels in
    *label_column* of the Spark DataFrame *df*, one row kept per privacy unit, with the whole
    *budget* (``pipeline_dp.dataframes.Budget``), as ``run_query`` spends it."""
    converter = dataframes._create_dataframe_converter(df)  # PipelineDP's refusal of other kinds
    columns = dataframes.Columns(privacy_unit_column, label_column, None)
    col = converter.dataframe_to_collection(df, columns)  # (unit, label, 0)
    accountant = pipeline_dp.NaiveBudgetAccountant(
        total_epsilon=budget.epsilon, total_delta=budget.delta
    )
    backend = pipeline_dp.SparkRDDBackend(df.sparkSession.sparkContext)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0), partition_extractor=operator.itemgetter(1)
    )
    released = DPEngine(accountant, backend).release(col, spec, extractors)
    accountant.compute_budgets()
    (result,) = released.collect()
    return result
