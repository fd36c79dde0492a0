"""dpplug: a plugin registry of exact differential-privacy mechanisms for OpenDP and PipelineDP.

Public API::

    import dpplug
    sampler = dpplug.create("geosample", n=12, epsilon=Fraction(1, 2))
    sampler.guarantee            # exactly what was achieved, with its neighbouring relation
    sampler.sample([3, 7, 12], dpplug.SeededSource(1))
    dpplug.registry()            # every registered plugin, built-in or third-party
"""

from dpplug.errors import (
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
from dpplug.kinds import (
    CountingQuerySampler,
    HistogramReleaser,
    Kind,
    Mechanism,
    PartitionSelector,
    Selection,
)
from dpplug.params import Param, Schema
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource, SystemSource
from dpplug.registry import Entry, Registry, create, registry

__all__ = [
    "COUNT_SENSITIVITY_1",
    "Accuracy",
    "BadData",
    "BadParameter",
    "CountingQuerySampler",
    "DpplugError",
    "DuplicateMechanismName",
    "Entry",
    "ErrorBound",
    "Guarantee",
    "HistogramReleaser",
    "Kind",
    "Mechanism",
    "Neighbouring",
    "NotSupported",
    "Param",
    "PartitionSelector",
    "PluginFault",
    "Pmf",
    "RandomSource",
    "Registry",
    "Relation",
    "Schema",
    "SeededSource",
    "Selection",
    "SystemSource",
    "UnknownMechanism",
    "create",
    "hookimpl",
    "registry",
]
