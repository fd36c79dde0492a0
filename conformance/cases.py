"""The instances a contract checks: one per declared conformance case of a plugin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dpplug.kinds import CountingQuerySampler, Mechanism
from dpplug.registry import Entry


def instances(entry: Entry) -> Iterator[tuple[dict[str, Any], Mechanism]]:
    """(parameters, instance) for each of the plugin's ``conformance_cases``."""
    for case in entry.cls.conformance_cases:
        yield dict(case), entry.create(**case)


def describe_case(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "no parameters"


def probe_counts(sampler: CountingQuerySampler) -> tuple[int, ...]:
    """True counts at which a sampler is sampled: both ends (clamping) and the middle."""
    if sampler.n is None:
        return (-1, 0, 1)
    return tuple(sorted({0, sampler.n // 2, sampler.n}))


def neighbour_pairs(sampler: CountingQuerySampler) -> tuple[tuple[int, int], ...]:
    """Neighbouring counts (sensitivity apart) at the low end, the middle and the high end."""
    step = sampler.guarantee.neighbouring.sensitivity
    if sampler.n is None:
        return ((0, step),)
    starts = sorted({0, max(0, sampler.n // 2 - step // 2), max(0, sampler.n - step)})
    return tuple((c, c + step) for c in starts if c + step <= sampler.n)
