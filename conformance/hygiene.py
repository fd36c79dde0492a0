"""Contract 7, hygiene: what a plugin does besides releasing the right law.

- Real outputs are of the declared type, shape and range (and, for releases, in canonical order,
  the same whatever order the caller built the data in, with no empty bin from a releaser that
  declares it shows none), reproducible from the seed, with something drawn; a plugin that claims
  strict running time draws a number of times that does not depend on the data. Each kind's
  probe runs its mechanism on a few small inputs and reports what is wrong.
- Every call leaves the caller's data as it was (checked against deep copies), on the small
  inputs and, on the first declared case, on large ones (:meth:`~.base.Probe.large_calls`: 2¹⁶
  counts, or as many labels and rows as the mechanism takes), where batch-size code paths start.
- Randomness comes from the RandomSource alone: Python's and numpy's global generators are left
  untouched, and the bits drawn from the source are at least the entropy of what is released
  (90% of it, over :data:`ACCOUNTED` outputs; an exact sampler needs all of it on average, so a
  plugin that draws a little and then uses another generator is caught).
- An output depends on the call alone, not on the instance's history: the calls made again on a
  fresh instance of the case, in reverse order and after refused bad input, give the same
  outputs from the same seed (a buffer reused across calls without being cleared is caught).
- An output is the same in another process: the declared cases' seeded calls are made again in
  a fresh interpreter with another ``PYTHONHASHSEED`` (:mod:`.reproduction`, started first and
  running alongside the rest), and must give the same outputs, so randomness drawn from string
  hashing or import-time state is caught.

Calls are checked on the declared and the generated cases; large inputs, history, outputs,
entropy and the second process on the declared cases, whose sizes the author chose (large
inputs on the first).
"""

from __future__ import annotations

import contextlib
import copy
import math
import pickle
import random
import reprlib
from typing import Any

import numpy as np

from dpplug.conformance.checks import run_checks
from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.probes import generated_probes, probes
from dpplug.conformance.probes.base import Call, Probe
from dpplug.conformance.reproduction import Row, second_process, seeded_row
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.plugin_registry import Entry
from dpplug.randomness import SeededSource
from dpplug.surfaces import Dimension

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


_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxdict = _SHORT.maxtuple = 16
_SHORT.maxstring = _SHORT.maxother = 200


def _shown(value: object) -> str:
    """*value* on one line of at most a few hundred characters (a large input is shortened)."""
    return " ".join(_SHORT.repr(value).split())


def _call_problems(probe: Probe, calls: list[Call], seed: int, rows: list[Row]) -> list[str]:
    """Calls that change the caller's data or touch a global generator; each call's output is
    added to *rows*."""
    for call in calls:
        copies = copy.deepcopy(call.inputs)
        before = _global_state()
        rows.append(seeded_row(probe, call, call.run(SeededSource(seed))))
        if _global_state() != before:
            return [f"{call.what} touched Python's or numpy's global random generator"]
        for given, kept in zip(call.inputs, copies, strict=True):
            if not _same(kept, given):
                return [
                    f"{call.what} changed the caller's data: {_shown(kept)} became {_shown(given)}"
                ]
    return []


def _history_problems(entry: Entry, probe: Probe, first: list[Row], seed: int) -> list[str]:
    """The calls made again on a fresh instance of *probe*'s case, the last first, then refused
    bad input, then the others backwards: each output must be the one made (in order, on the
    probe's own fresh instance) from the same seed."""
    fresh = type(probe)(entry.create(**probe.params), probe.params)
    calls = fresh.calls(seed)
    expected = {what: digest for _, what, digest in first}
    made: list[str] = []
    for call in [calls[-1], *reversed(calls[:-1])]:
        if seeded_row(fresh, call, call.run(SeededSource(seed)))[2] != expected[call.what]:
            before = ", ".join(made[:3]) + (
                f" and {len(made) - 3} more calls" if len(made) > 3 else ""
            )
            return [
                f"{call.what} from seed {seed} gave another output on an instance that had "
                f"made {before or 'nothing'} first: the output depends on the instance's history "
                "(state kept between calls)"
            ]
        if not made:
            refused = fresh.bad_data(SeededSource(seed))
            for _, bad in refused:
                with contextlib.suppress(Exception):  # the bad-input contract judges these
                    bad()
            made.append(f"{call.what}, {len(refused)} refused bad inputs")
        else:
            made.append(call.what)
    return []


def _entropy_problems(probe: Probe, seed: int) -> list[str]:
    """Bits drawn against the entropy released, at the probe's middle input (skipped where
    the law is not known exactly or within an enclosure)."""
    value = probe.inputs[len(probe.inputs) // 2]
    try:
        law, _ = probe.tested_law(value)
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
    seed, strict = settings.seed, entry.cls.strict_time
    declared = list(probes(entry))
    rows: list[Row] = []
    with second_process(entry, seed) as second:
        for probe in [*declared, *generated_probes(entry, settings)]:
            if probe not in declared:  # calls only on the generated cases (their cost)
                problems = _call_problems(probe, probe.calls(seed), seed, [])
            else:
                first: list[Row] = []
                problems = _call_problems(probe, probe.calls(seed), seed, first)
                if probe is declared[0]:  # large inputs once (their cost)
                    problems = problems or _call_problems(probe, probe.large_calls(seed), seed, [])
                problems = problems or probe.hygiene_problems(strict, seed)
                problems = problems or _entropy_problems(probe, seed)
                problems = problems or _history_problems(entry, probe, first, seed)
                rows += first
            if problems:
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
        problem = second.problem(rows)
        if problem is not None:
            return ContractResult(NAME, Outcome.FAILED, problem)
    failure, cells = run_checks(declared, NAME, settings)
    if failure is not None:
        return ContractResult(NAME, Outcome.FAILED, failure)
    time = "data-independent draw count, " if strict else ""
    elsewhere = (
        f"; not compared with a second process: {second.unavailable}"
        if second.unavailable
        else ", in a second process with another hash seed and on a used instance"
    )
    surfaces = declared[0].call_surfaces
    history = "the same outputs on an instance with another history" + (
        "" if second.unavailable else " and in a second process"
    )
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"outputs of the declared type, shape and range, {time}reproducible from the "
        f"RandomSource{elsewhere}, which supplies at least the entropy released; the caller's "
        "data (small and large) and the global generators untouched",
        power="any seen",
        cells=(*(cell(s, Dimension.STATE, Status.CHECKED, history) for s in surfaces), *cells),
    )
