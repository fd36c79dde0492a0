"""The built-in mechanisms of dpplug, registered through the same hooks a third party uses."""

from __future__ import annotations

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.histograms import RELEASERS
from dpplug.plugins.partition import SELECTORS
from dpplug.plugins.samplers import SAMPLERS


@hookimpl
def register_samplers(register: Register) -> None:
    for sampler in SAMPLERS:
        register(sampler)


@hookimpl
def register_partition_selectors(register: Register) -> None:
    for selector in SELECTORS:
        register(selector)


@hookimpl
def register_histogram_releasers(register: Register) -> None:
    for releaser in RELEASERS:
        register(releaser)
