"""Exact output laws of histogram releasers on tiny cases
(:meth:`dpplug.HistogramReleaser.release_law`; the exact-privacy contract compares them).

The law of a release is computed from the releaser's own code by exact enumeration
(:func:`dpplug.program.law`), in one of two ways:

- **Program.** A releaser with a ``program(counts)`` method (a generator of draws, see
  :mod:`dpplug.program`; the pure sparse histogram has one) is enumerated
  directly.
- **Scripted sampler.** A releaser that names its counting-query algorithm M in ``sampler``
  (Balcer–Vadhan's BasicHistogram_{M,A}, StabilityHistogram_{M,t}, …) and draws nothing else is
  replayed with the sampler's noisy counts scripted: each call ``sampler.sample(counts)`` becomes
  a draw whose law is the product of the sampler's exact pmfs (``Noise``), so every combination
  of noisy counts is run through the releaser's real ``release`` and weighted exactly. A release
  that draws from its RandomSource itself (the compact histogram's field values) has no law of
  this kind and is refused.

- **Compact.** A compact histogram releaser
(:func:`~dpplug.kinds.histogram_releaser.compact_law.is_compact`) draws a
  field value per point, too many outcomes to enumerate; its law is the law of the counts it decodes
  at the first labels, which stands exactly for the release law in the privacy check once its
  components are certified by replay (:mod:`dpplug.kinds.histogram_releaser.compact_law`, the
  argument).

Enumeration is for tiny cases only: a law whose draws have more than :data:`MAX_OUTCOMES`
outcomes each (the pure sparse histogram's certified order statistics draw 2^b-valued integers
with b in the tens), or which needs more than :data:`MAX_RUNS` replays of the program, raises
:class:`~dpplug.errors.NotSupported` saying why, so the contract using it reports a skip.

A law maps each output to its exact probability. Outputs are keyed by :func:`bins`: the released
(index, count) pairs in the order the release lists them (every label of a dense histogram).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser.compact_law import decoded_law, is_compact
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram, SparseHistogram
from dpplug.kinds.sampler.base import CountingQuerySampler
from dpplug.program import Bits, Draw, Independent, Noise, Program, Uniform, law
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.kinds.histogram_releaser.base import HistogramReleaser

#: The most outcomes one enumerated draw may have.
MAX_OUTCOMES = 1 << 16
#: The most replays of a program one law may take (each path replays it from the start).
MAX_RUNS = 200_000

Bins = tuple[tuple[int, int], ...]
Law = dict[Bins, Any]  # output → mpq


def bins(output: object) -> Bins:
    """The released (index, count) pairs of a dense or sparse histogram, in the order the
    release lists them; a program's output is already such a tuple."""
    if isinstance(output, tuple):
        return output
    if isinstance(output, DenseHistogram):
        return tuple((i, int(c)) for i, c in enumerate(output.counts))
    if isinstance(output, SparseHistogram):
        return tuple((int(i), int(c)) for i, c in zip(output.indices, output.counts, strict=True))
    raise NotSupported(f"no exact law for {type(output).__name__} outputs")


def release_law(releaser: HistogramReleaser, data: Mapping[Any, int]) -> Law:
    """The exact law of ``releaser.release(data)`` (see the module docstring for the routes)."""
    if is_compact(releaser):
        return decoded_law(releaser, data)
    program = getattr(releaser, "program", None)
    if callable(program):
        counts = releaser.true_counts(data)
        return _law_of(releaser.name, partial(program, counts))
    sampler = getattr(releaser, "sampler", None)
    if isinstance(sampler, CountingQuerySampler):
        return _law_of(releaser.name, partial(_scripted_release, releaser, sampler, data))
    raise NotSupported(
        f"{releaser.name} has neither a program(counts) nor a counting-query sampler in "
        "`sampler`, so its release law cannot be enumerated"
    )


def _law_of(name: str, program: Callable[[], Program[Any]]) -> Law:
    return law(_counted(name, program, bins), partial(_inspect, name))


def _counted(
    name: str, program: Callable[[], Program[Any]], key: Callable[[Any], Any]
) -> Callable[[], Program[Any]]:
    """*program* with its output keyed by *key*, refusing (NotSupported) to be replayed more
    than :data:`MAX_RUNS` times."""
    runs = 0

    def counted() -> Program[Any]:
        nonlocal runs
        runs += 1
        if runs > MAX_RUNS:
            raise NotSupported(f"the law of {name}'s release needs more than {MAX_RUNS} replays")
        return key((yield from program()))

    return counted


def _inspect(name: str, draw: Draw) -> Draw:
    """The limits on a draw about to be enumerated: a draw with too many outcomes raises
    NotSupported before anything is enumerated; the parts of an
    :class:`~dpplug.program.Independent` draw get the same limits (each its own replay count),
    their outputs as they are."""
    if isinstance(draw, Independent):
        parts = (_counted(name, part, _same) for part in draw.programs)
        return Independent(*parts, inspect=partial(_inspect, name))
    if _outcomes(name, draw) > MAX_OUTCOMES:
        raise NotSupported(
            f"{name}'s release draws a {type(draw).__name__} with more than {MAX_OUTCOMES} "
            "outcomes, which cannot be enumerated"
        )
    return draw


def _same(output: Any) -> Any:
    return output


def _outcomes(name: str, draw: Draw) -> int:
    """How many outcomes enumerating *draw* visits, without enumerating it where that is
    costly; NotSupported for noisy counts from an unbounded law, which no finite enumeration
    covers. A Bits draw is not counted here: its law is computed by splitting, never over its
    2^b values, and raises NotSupported past :data:`~dpplug.program.MAX_PIECES` pieces."""
    if isinstance(draw, Bits):
        return 1
    if isinstance(draw, Uniform):
        return draw.k
    if isinstance(draw, Noise):
        laws = [draw.sampler.pmf(c) for c in draw.counts]
        if not all(law.bounded for law in laws):
            raise NotSupported(
                f"{draw.sampler.name}'s law is unbounded, so the law of {name}'s release "
                "cannot be enumerated"
            )
        return math.prod(len(law) for law in laws)
    return len(draw.law())


class NeedNoise(Exception):
    """The replayed release asked the sampler for noisy counts that are not scripted yet."""

    def __init__(self, counts: list[int]) -> None:
        super().__init__(counts)
        self.counts = counts


class _DrewFromSource(Exception):
    """The replayed release drew from its RandomSource directly."""


class ScriptedSampler:
    """Stands in for a releaser's sampler: ``sample`` answers from a script of noisy counts
    (raising :class:`NeedNoise` past its end) and records the true counts it was asked for in
    ``asked``; everything else is the real sampler's."""

    def __init__(self, sampler: CountingQuerySampler, script: list[tuple[int, ...]]) -> None:
        self._sampler, self._script, self._next = sampler, script, 0
        self.asked: list[list[int]] = []

    def sample(self, counts: object, *_args: object, **_kwargs: object) -> npt.NDArray[np.int64]:
        array = np.asarray(counts)
        self.asked.append([int(c) for c in array.reshape(-1)])
        if self._next == len(self._script):
            raise NeedNoise([int(c) for c in array.reshape(-1)])
        answer = self._script[self._next]
        self._next += 1
        return np.array(answer, dtype=np.int64).reshape(array.shape)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sampler, name)


class _RefusingSource(RandomSource):
    """A source that refuses to serve any random byte."""

    def random_bytes(self, count: int) -> bytes:
        if count:
            raise _DrewFromSource
        return b""


def _scripted_release(
    releaser: HistogramReleaser, sampler: CountingQuerySampler, data: Mapping[Any, int]
) -> Program[Any]:
    """The release as a program whose only draws are its sampler's noisy counts: the release
    is replayed with the noisy counts received so far until it completes."""
    script: list[tuple[int, ...]] = []
    while True:
        replay = copy.copy(releaser)
        replay.sampler = ScriptedSampler(sampler, script)  # type: ignore[attr-defined]
        try:
            return replay.release(data, _RefusingSource())
        except NeedNoise as need:
            script.append((yield Noise(sampler, need.counts)))
        except _DrewFromSource:
            raise NotSupported(
                f"{releaser.name} draws from its RandomSource besides its sampler, so its "
                "release law is not a function of the sampler's law and cannot be enumerated"
            ) from None
