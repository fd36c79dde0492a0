"""Registration hooks for a test zoo of broken plugins of every kind: each kind's hook registers
the zoo's classes of that kind. ``register_samplers, … = kind_hooks(ZOO)`` in the zoo's module."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import dpplug


def kind_hooks(zoo: Iterable[type]) -> tuple[Callable[[Any], None], ...]:
    """The six kinds' hooks (samplers, partition selectors, histogram, anonymized-histogram
    and query releasers, set-union selectors, in that order) registering *zoo*'s classes of each
    kind."""

    def hook(base: type) -> Callable[[Any], None]:
        def register_kind(register: Any) -> None:
            for cls in zoo:
                if issubclass(cls, base):
                    register(cls)

        return dpplug.hookimpl(register_kind)

    bases = (
        dpplug.CountingQuerySampler,
        dpplug.PartitionSelector,
        dpplug.HistogramReleaser,
        dpplug.AnonymizedHistogramReleaser,
        dpplug.QueryReleaser,
        dpplug.SetUnionSelector,
    )
    return tuple(hook(base) for base in bases)
