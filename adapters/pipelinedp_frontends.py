"""How dpplug's engine reaches PipelineDP 0.3.1's front ends (``private_beam``, ``private_spark``,
``dataframes``) without copying their code or changing PipelineDP.

Those front ends build ``DPEngine(budget_accountant, backend)`` by name inside their methods and
take no engine from the caller. dpplug's front ends (:mod:`dpplug.adapters.pipelinedp_beam`,
:mod:`~dpplug.adapters.pipelinedp_spark`, :mod:`~dpplug.adapters.pipelinedp_dataframes`) subclass
them and run PipelineDP's own methods (the same code objects) with that name bound to dpplug's
:class:`~dpplug.adapters.pipelinedp.DPEngine`: :func:`engine_bound`. PipelineDP's modules and
classes stay as they are, so PipelineDP's own front ends keep building PipelineDP's engine.

dpplug specs then travel in PipelineDP's own parameters: ``noise_kind=sampler(...)`` in
``CountParams``/``PrivacyIdCountParams`` or ``run_query``, and
``partition_selection_strategy=partition_selection(...)`` in ``SelectPartitionsParams``
(docs/kinds.md, "PipelineDP").
"""

from __future__ import annotations

import functools
import operator
import types
from collections.abc import Callable
from typing import Any

import pipeline_dp

from dpplug.adapters.pipelinedp import DPEngine


def engine_bound(function: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """*function* itself (its code object, defaults and closure, unchanged) with the global
    *names* bound to other objects, e.g. ``DPEngine`` to dpplug's engine. The original function
    and its module are untouched."""
    rebound = types.FunctionType(
        function.__code__,
        {**function.__globals__, **names},
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    rebound.__kwdefaults__ = function.__kwdefaults__
    return functools.update_wrapper(rebound, function)


def with_dpplug_engine(module: types.ModuleType) -> types.SimpleNamespace:
    """A namespace with *module*'s names and ``DPEngine`` bound to dpplug's engine, for front ends
    that reach the engine as ``module.DPEngine``."""
    return types.SimpleNamespace(**{**vars(module), "DPEngine": DPEngine})


class _OfElement:
    """``partition_extractor`` applied to the element of a front end's (privacy id, element)."""

    def __init__(self, partition_extractor: Callable[[Any], Any]) -> None:
        self._extract = partition_extractor

    def __call__(self, row: tuple[Any, Any]) -> Any:
        return self._extract(row[1])


def element_extractors(partition_extractor: Callable[[Any], Any]) -> Any:
    """DataExtractors for the (privacy id, element) rows that PipelineDP's private collections
    hold, with *partition_extractor* reading the element (picklable for Beam and Spark)."""
    return pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=_OfElement(partition_extractor),
        value_extractor=operator.itemgetter(1),
    )
