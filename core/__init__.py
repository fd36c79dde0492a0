"""dpplug: a plugin registry of exact differential-privacy mechanisms for OpenDP and PipelineDP.

Public API::

    import dpplug
    sampler = dpplug.create("geosample", n=12, epsilon=Fraction(1, 2))
    sampler.guarantee            # exactly what was achieved, with its neighbouring relation
    sampler.sample([3, 7, 12], dpplug.SeededSource(1))
    dpplug.registry()            # every registered plugin, built-in or third-party
    dpplug.compare("partition-selector", epsilon=1, delta=1e-5, l0=10).best  # which to use

The names below are imported on first use, so ``import dpplug`` (and the pytest plugin, which
every pytest session on a machine with dpplug installed loads) costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name → the module that defines it.
_EXPORTS = {
    **dict.fromkeys(
        (
            "AccuracyWarning",
            "BadData",
            "BadParameter",
            "DpplugError",
            "DuplicateMechanismName",
            "NotSupported",
            "PluginFault",
            "UnknownMechanism",
        ),
        "dpplug.errors",
    ),
    **dict.fromkeys(
        ("COUNT_SENSITIVITY_1", "Accuracy", "ErrorBound", "Guarantee", "Neighbouring", "Relation"),
        "dpplug.guarantee",
    ),
    "hookimpl": "dpplug.hookspecs",
    "Kind": "dpplug.kind",
    **dict.fromkeys(
        (
            "KINDS",
            "AnonymizedHistogram",
            "AnonymizedHistogramReleaser",
            "CompactHistogram",
            "CountingQuerySampler",
            "DenseHistogram",
            "Estimate",
            "HistogramQueries",
            "HistogramReleaser",
            "PartitionSelector",
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
        ),
        "dpplug.kinds",
    ),
    "compare": "dpplug.comparison",
    "Mechanism": "dpplug.mechanism",
    **dict.fromkeys(("Param", "Schema"), "dpplug.params"),
    "Pmf": "dpplug.pmf",
    "EnclosedLaw": "dpplug.enclosed_law",
    **dict.fromkeys(("RandomSource", "SeededSource", "SystemSource"), "dpplug.randomness"),
    **dict.fromkeys(("Entry", "Registry", "create", "registry"), "dpplug.plugin_registry"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpplug' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:
    from dpplug.comparison import compare
    from dpplug.enclosed_law import EnclosedLaw
    from dpplug.errors import (
        AccuracyWarning,
        BadData,
        BadParameter,
        DpplugError,
        DuplicateMechanismName,
        NotSupported,
        PluginFault,
        UnknownMechanism,
    )
    from dpplug.guarantee import (
        COUNT_SENSITIVITY_1,
        Accuracy,
        ErrorBound,
        Guarantee,
        Neighbouring,
        Relation,
    )
    from dpplug.hookspecs import hookimpl
    from dpplug.kind import Kind
    from dpplug.kinds import (
        KINDS,
        AnonymizedHistogram,
        AnonymizedHistogramReleaser,
        CompactHistogram,
        CountingQuerySampler,
        DenseHistogram,
        Estimate,
        HistogramQueries,
        HistogramReleaser,
        PartitionSelector,
        QueryAnswers,
        QueryReleaser,
        QuerySession,
        Selection,
        SetUnionSelector,
        SparseHistogram,
        SparseProjection,
        SparseQuery,
        TrueCounts,
        Workload,
        sorted_l1,
    )
    from dpplug.mechanism import Mechanism
    from dpplug.params import Param, Schema
    from dpplug.plugin_registry import Entry, Registry, create, registry
    from dpplug.pmf import Pmf
    from dpplug.randomness import RandomSource, SeededSource, SystemSource
