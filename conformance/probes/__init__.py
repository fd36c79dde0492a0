"""One probe module per kind of mechanism (:mod:`dpplug.kinds`): what the contracts ask of a
mechanism of that kind (:class:`~dpplug.conformance.probes.base.Probe`).

:data:`PROBES` maps each kind (the :class:`~dpplug.kind.Kind` object, not its name) to its
probe; a new kind adds its module and one line here, and no contract changes
(``docs/adding-a-kind.md``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dpplug.conformance.generated import generated_cases, text_cases
from dpplug.conformance.probes.anonymized_histogram_releaser.probe import AnonymizedProbe
from dpplug.conformance.probes.base import Probe, instances
from dpplug.conformance.probes.histogram_releaser.probe import ReleaserProbe
from dpplug.conformance.probes.partition_selector.probe import SelectorProbe
from dpplug.conformance.probes.query_releaser.probe import QueryReleaserProbe
from dpplug.conformance.probes.sampler.probe import SamplerProbe
from dpplug.conformance.probes.set_union_selector.probe import SetUnionProbe
from dpplug.conformance.settings import Settings
from dpplug.errors import DpplugError, NotSupported
from dpplug.kind import Kind
from dpplug.kinds import (
    ANONYMIZED_HISTOGRAM_RELEASER,
    HISTOGRAM_RELEASER,
    PARTITION_SELECTOR,
    QUERY_RELEASER,
    SAMPLER,
    SET_UNION_SELECTOR,
)
from dpplug.plugin_registry import Entry

PROBES: dict[Kind, type[Probe]] = {
    SAMPLER: SamplerProbe,
    PARTITION_SELECTOR: SelectorProbe,
    HISTOGRAM_RELEASER: ReleaserProbe,
    ANONYMIZED_HISTOGRAM_RELEASER: AnonymizedProbe,
    QUERY_RELEASER: QueryReleaserProbe,
    SET_UNION_SELECTOR: SetUnionProbe,
}


def exhaustive(entry: Entry) -> bool:
    """Whether every generated case of the plugin is kept and takes the exact accuracy claims
    (:attr:`Probe.exhaustive` of its kind's probe)."""
    return _probe_class(entry).exhaustive


def _probe_class(entry: Entry) -> type[Probe]:
    probe = PROBES.get(entry.kind)
    if probe is None:
        raise NotSupported(f"the contracts have no probe for a {entry.kind.name}")
    return probe


def probes(entry: Entry) -> Iterator[Probe]:
    """A probe for each conformance case the plugin declares."""
    probe = _probe_class(entry)
    for params, mechanism in instances(entry):
        yield probe(mechanism, params)


#: Generated probes by plugin class and run settings, with the entry they were built for: every
#: contract asks, and building them is the costly part.
_GENERATED: dict[tuple[type, Settings], tuple[Entry, list[Probe]]] = {}


def generated_probes(entry: Entry, settings: Settings) -> list[Probe]:
    """Probes for the cases the suite derives from the schema (:mod:`..generated`), those small
    enough for the exact checks."""
    known = _GENERATED.get((entry.cls, settings))
    if known is not None and known[0] is entry:
        return known[1]
    probe = _probe_class(entry)

    def small(params: dict[str, Any], mechanism: Any) -> Probe | None:
        candidate = probe(mechanism, params)
        return candidate if candidate.small(settings) else None

    found = generated_cases(entry, settings.seed, small, probe.exhaustive)
    _GENERATED[(entry.cls, settings)] = (entry, found)
    return found


def text_probes(entry: Entry, settings: Settings) -> Iterator[Probe]:
    """Probes for :func:`~..generated.text_cases` the plugin accepts that are small enough for
    the exact checks and not among :func:`generated_probes`, built as they are asked for."""
    probe = _probe_class(entry)
    known = [p.params for p in generated_probes(entry, settings)]
    for params in text_cases(entry, settings.seed):
        if params in known:
            continue
        try:
            candidate = probe(entry.create(**params), params)
        except DpplugError:
            continue
        if candidate.small(settings):
            yield candidate
