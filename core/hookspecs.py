"""The plugin hooks of dpplug: one per kind of mechanism (pluggy project name ``"dpplug"``).

A plugin is a module (or any object) with functions marked ``@dpplug.hookimpl``; third-party
packages expose it through the entry-point group ``dpplug``::

    [project.entry-points.dpplug]
    my_mechanisms = "my_package.plugin"

Each hook receives a ``register`` callable; call it once per mechanism class. Built-in
mechanisms are registered through exactly these hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("dpplug")
hookimpl = pluggy.HookimplMarker("dpplug")

Register = Callable[[type[Any]], None]


@hookspec
def register_samplers(register: Register) -> None:
    """Register counting-query samplers: ``register(cls)`` for each subclass of
    :class:`dpplug.CountingQuerySampler` (Balcer–Vadhan Def. 4.1–4.3)."""


@hookspec
def register_histogram_releasers(register: Register) -> None:
    """Register histogram releasers: ``register(cls)`` for each subclass of
    :class:`dpplug.HistogramReleaser`."""


@hookspec
def register_partition_selectors(register: Register) -> None:
    """Register partition selectors: ``register(cls)`` for each subclass of
    :class:`dpplug.PartitionSelector`."""
