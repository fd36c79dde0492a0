"""Exact output laws of histogram releasers on tiny cases
(:meth:`dpplug.HistogramReleaser.release_law`; the exact-privacy contract compares them).

The law of a release is computed from the structure the releaser declares
(:meth:`~dpplug.Mechanism.exact_structure`, :mod:`dpplug.structures`):

- :class:`~dpplug.structures.ServedDraws`: the releaser's own ``release`` is run on the data
  with every draw served from an enumeration of its law (:func:`dpplug.program.served_law`):
  programs of draws (the pure sparse histogram's KH′), its sampler's noisy counts asked through
  :func:`dpplug.program.noise` (Balcer–Vadhan's BasicHistogram_{M,A}, StabilityHistogram_{M,t},
  …; a Noise draw's law is the product of the sampler's exact pmfs), and small raw draws. Every
  combination of outcomes runs through the real ``release`` and is weighted exactly.
- :class:`~dpplug.kinds.histogram_releaser.compact_law.CompactField`: a compact histogram draws a
  field value per point, too many outcomes to enumerate; its law is the law of the counts it
  decodes at the first labels, which stands exactly for the release law in the privacy check
  once its components are certified by replay (:mod:`.compact_law`, the argument).

Enumeration is for tiny cases only: a law whose draws have more than :data:`MAX_OUTCOMES`
outcomes each, or which needs more than :data:`MAX_RUNS` runs of the release, raises
:class:`~dpplug.errors.NotSupported` saying why, so the contract using it reports a skip.

A law maps each output to its exact probability. Outputs are keyed by :func:`bins`: the released
(index, count) pairs in the order the release lists them (every label of a dense histogram).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser.compact_law import CompactField, decoded_law
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram, SparseHistogram
from dpplug.program import (
    Bits,
    Draw,
    Independent,
    Noise,
    Program,
    Step,
    Uniform,
    enumerate_law,
    served_steps,
)
from dpplug.structures import ServedDraws

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
    structure = releaser.exact_structure()
    if isinstance(structure, CompactField):
        return decoded_law(releaser, structure, data)
    if isinstance(structure, ServedDraws):
        return _law_of(releaser.name, served_steps(_release_call(releaser, data)))
    raise NotSupported(
        f"{releaser.name} declares no exact structure its release law can be computed from "
        "(ServedDraws or CompactField, dpplug.structures)"
    )


def _release_call(releaser: HistogramReleaser, data: Mapping[Any, int]) -> Callable[..., Any]:
    """``releaser.release`` on *data*, as a function of the source. Where the plugin keeps the
    kind's ``release`` (validate the data, then ``_release`` the counts), the data is validated
    once rather than on every replayed run: validation takes no source, so it draws nothing,
    and every run then sees the same counts."""
    from dpplug.kinds.histogram_releaser.base import HistogramReleaser

    if type(releaser).release is HistogramReleaser.release:
        return partial(releaser._release, releaser.true_counts(data))
    return partial(releaser.release, data)


def _law_of(name: str, step: Step) -> Law:
    """The law of the release *step* replays, keyed by :func:`bins`, refusing (NotSupported)
    to run it more than :data:`MAX_RUNS` times."""
    runs = 0

    def counted(prefix: Any) -> tuple[Draw | None, Any]:
        nonlocal runs
        runs += 1
        if runs > MAX_RUNS:
            raise NotSupported(f"the law of {name}'s release needs more than {MAX_RUNS} runs")
        draw, output = step(prefix)
        return draw, None if draw is not None else bins(output)

    return enumerate_law(counted, partial(_inspect, name))


def _counted(name: str, program: Callable[[], Program[Any]]) -> Callable[[], Program[Any]]:
    """*program* refusing (NotSupported) to be replayed more than :data:`MAX_RUNS` times."""
    runs = 0

    def counted() -> Program[Any]:
        nonlocal runs
        runs += 1
        if runs > MAX_RUNS:
            raise NotSupported(f"the law of {name}'s release needs more than {MAX_RUNS} replays")
        return (yield from program())

    return counted


def _inspect(name: str, draw: Draw) -> Draw:
    """The limits on a draw about to be enumerated: a draw with too many outcomes raises
    NotSupported before anything is enumerated; the parts of an
    :class:`~dpplug.program.Independent` draw get the same limits (each its own replay count),
    their outputs as they are."""
    if isinstance(draw, Independent):
        parts = (_counted(name, part) for part in draw.programs)
        return Independent(*parts, inspect=partial(_inspect, name))
    if _outcomes(name, draw) > MAX_OUTCOMES:
        raise NotSupported(
            f"{name}'s release draws a {type(draw).__name__} with more than {MAX_OUTCOMES} "
            "outcomes, which cannot be enumerated"
        )
    return draw


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
