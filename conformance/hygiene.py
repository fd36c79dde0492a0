"""Contract 7, hygiene: what a plugin does besides releasing the right law.

- Real outputs are of the declared type, shape and range (and, for releases, in canonical order,
  the same whatever order the caller built the data in, with no empty bin from a releaser that
  declares it shows none), reproducible from the seed, with something drawn; a plugin that claims
  strict running time draws a number of times that does not depend on the data. Each kind's
  probe runs its mechanism on a few small inputs and reports what is wrong.
- Every call leaves the caller's data as it was (checked against copies).
- Randomness comes from the RandomSource alone: Python's and numpy's global generators are left
  untouched, and the bits drawn from the source are at least the entropy of what is released
  (90% of it, over :data:`ACCOUNTED` outputs; an exact sampler needs all of it on average, so a
  plugin that draws a little and then uses another generator is caught).

Calls are checked on the declared and the generated cases; outputs and entropy on the declared
cases, whose sizes the author chose.
"""

from __future__ import annotations

import copy
import math
import pickle
import random
from typing import Any

import numpy as np

from dpplug.conformance.probes import generated_probes, probes
from dpplug.conformance.probes.base import Probe
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.plugin_registry import Entry
from dpplug.randomness import SeededSource

NAME = "hygiene"
#: Outputs over which drawn bits are compared with the released entropy.
ACCOUNTED = 1000


class MeteredSource(SeededSource):
    """A seeded source that counts the random bytes it serves."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.bytes_served = 0

    def random_bytes(self, count: int) -> bytes:
        self.bytes_served += count
        return super().random_bytes(count)


def _same(before: Any, after: Any) -> bool:
    if isinstance(before, np.ndarray):
        return (
            isinstance(after, np.ndarray)
            and before.dtype == after.dtype
            and bool(np.array_equal(before, after))
        )
    return type(before) is type(after) and before == after and list(before) == list(after)


def _global_state() -> bytes:
    """Python's and numpy's global generators' states, to compare before and after a call."""
    return pickle.dumps((random.getstate(), np.random.get_state()))


def _call_problems(probe: Probe, seed: int) -> list[str]:
    """Calls that change the caller's data or touch a global generator."""
    for call in probe.calls(seed):
        copies = copy.deepcopy(call.inputs)
        before = _global_state()
        call.run(SeededSource(seed))
        if _global_state() != before:
            return [f"{call.what} touched Python's or numpy's global random generator"]
        for given, kept in zip(call.inputs, copies, strict=True):
            if not _same(kept, given):
                return [f"{call.what} changed the caller's data: {kept!r} became {given!r}"]
    return []


def _entropy_problems(probe: Probe, seed: int) -> list[str]:
    """Bits drawn against the entropy released, at the probe's middle input (skipped where
    the law is not known exactly)."""
    value = probe.inputs[len(probe.inputs) // 2]
    try:
        law = probe.law(value)
    except NotSupported:
        return []
    entropy = -sum(float(p) * math.log2(float(p)) for p in law.values() if p)
    source = MeteredSource(seed)
    probe.draw(value, ACCOUNTED, source)
    drawn, needed = 8 * source.bytes_served, 0.9 * ACCOUNTED * entropy
    if drawn < needed:
        return [
            f"drew {drawn} random bits for {ACCOUNTED} outputs of entropy {entropy:.3g} bits "
            f"each ({ACCOUNTED * entropy:.0f} bits in all) at input {probe.show_input(value)}: "
            "its randomness comes from somewhere other than the RandomSource"
        ]
    return []


def check(entry: Entry, settings: Settings) -> ContractResult:
    strict = entry.cls.strict_time
    declared = list(probes(entry))
    for probe in [*declared, *generated_probes(entry, settings)]:
        problems = _call_problems(probe, settings.seed)
        if probe in declared:  # outputs and entropy on the declared cases only (their cost)
            problems = problems or probe.hygiene_problems(strict, settings.seed)
            problems = problems or _entropy_problems(probe, settings.seed)
        if problems:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
    time = "data-independent draw count, " if strict else ""
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"outputs of the declared type, shape and range, {time}reproducible from the "
        "RandomSource, which supplies at least the entropy released; the caller's data and the "
        "global generators untouched",
        power="any seen",
    )
