"""Exact laws and exact privacy of programs of noise requests whose noise is unbounded (the
anonymized-histogram releasers, :mod:`dpplug.program`; docs/conformance.md#unbounded-noise).

A program yields :class:`~dpplug.program.Noise` requests, each a vector of true counts to which
a sampler adds independent noise of exact rational law (two-sided geometric: unbounded support,
geometric tails), and a request may depend on the outcomes of the earlier ones (PrivHist's
blocks, Suresh 2019, Algorithm PRIVHIST). Its *transcript* is the list of outcomes, and its
output a function of the transcript. Both checks walk the tree of transcripts, replaying the
program along each path.

**Law over a window** (:func:`window_law`). The window is the set of transcripts of probability
at least θ, a finite set: a request's outcome is kept when the path's probability times its own
stays ≥ θ (its coordinates enumerated one by one, each factor ≤ 1, so pruning a partial product
below θ loses nothing; the Pmf's explicit window and its geometric tails give every outcome of
a coordinate above a floor exactly). Each complete transcript in the window adds its exact
probability to the cell of its output; each node where a transcript leaves the window (the
request at depth k after the prefix p of outcomes) has the exact probability
P(p)·(1 − Σ of the kept outcomes' probabilities), added to the cell ("left", k, p's first
outcome). The cells partition every transcript and their probabilities sum to exactly 1.
:func:`cell_of` puts a recorded transcript (:func:`dpplug.program.recording`) in its cell by the
same rule, so real releases are counted in finitely many cells whose probabilities are exact
rationals.

**Coupled likelihood ratio** (:func:`coupled_ratio`). For neighbouring inputs h and h′, a
bijection π between transcripts built request by request, π(y)_k = y_k + s_k(y_<k), gives for any
set S of outputs P_h(out ∈ S) ≤ ρ·P_h′(out ∈ S) and back, where ρ bounds
P_h(y)/P_h′(π(y)) and its inverse over every transcript, provided out(h, y) = out(h′, π(y)). With
independent noise, P_h(y) = Π_k P(y_k | c_k(h, y_<k)), so the ratio is at most the product over
requests of each request's largest ratio sup_z P(z | c)/P(z + s | c′), which is the largest
ratio of the laws at c and c′ − s coordinate by coordinate (the noise is a shift), computed over
every outcome in closed form (:func:`~dpplug.conformance.divergence.max_likelihood_ratio`: the
ratio of two geometric laws is constant in their tails). Two shifts are tried at each request:
0 (the same outcome for both inputs) and c′ − c (the same noise, ratio 1 for that request,
moving the dependence onto the later requests: PrivHist's Z^b when a count crosses T + 1 | T + 2);
the first whose subtree stays within the bound is kept. The histories enumerated are the scalar
requests' outcomes within :data:`RADIUS` of their counts and, of a vector request, its count
(followed by more requests: the mechanism's proof covers the rest) or, for the release's last
request, also each coordinate moved alone within :data:`RADIUS` and :data:`VECTOR_SPREAD`
outcomes with every coordinate moved (:func:`_histories`). The outputs are compared at the
leaves, so a release that reads the true data after its noise (weights, a floor or a length
from the true counts) differs there. Beyond these
histories the argument is the mechanism's proof, which its docstring gives.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from gmpy2 import mpq

from dpplug.conformance.divergence import max_likelihood_ratio
from dpplug.errors import NotSupported
from dpplug.pmf import Pmf
from dpplug.program import Draw, Noise, Step
from dpplug.randomness import SeededSource

#: How far from its true count a scalar request's outcome goes in the coupled check.
RADIUS = 2
#: How many outcomes of a vector request, every coordinate moved, the coupled check follows.
VECTOR_SPREAD = 24
#: The longest vector request whose coordinates are each moved alone, and how many outcomes
#: with every coordinate moved a longer one gets.
MOVED_ALONE, LONG_SPREAD = 16, 2
#: The most program replays one window law or one coupled check may take.
MAX_REPLAYS = 100_000

Cell = tuple[Any, ...]  # ("out", key of the output) or ("left", depth, prefix of outcomes)
Transcript = list[tuple[Draw, Any]]


class Replays:
    """A computation's next request (or output) after each prefix of outcomes (a
    :data:`~dpplug.program.Step`: a release whose draws are served, replayed), run once per
    prefix and remembered, and the sampler laws, computed once per (sampler, count)."""

    def __init__(self, step: Step, laws: dict[Any, Any]) -> None:
        """*laws*: the sampler laws and their ratios computed so far, shared between the
        computations of one mechanism."""
        self._replay, self._laws = step, laws
        self._steps: dict[tuple[Any, ...], tuple[Noise | None, Any]] = {}

    def step(self, prefix: tuple[Any, ...]) -> tuple[Noise | None, Any]:
        """(the next request, None), or (None, the output) once the release returns."""
        if prefix not in self._steps:
            if len(self._steps) >= MAX_REPLAYS:
                raise NotSupported(f"the noise window needs more than {MAX_REPLAYS} replays")
            draw, output = self._replay(prefix)
            self._steps[prefix] = (None, output) if draw is None else (_noise(draw), None)
        return self._steps[prefix]

    def law(self, draw: Noise, count: int) -> Pmf:
        key = (id(draw.sampler), count)
        if key not in self._laws:
            self._laws[key] = draw.sampler.pmf(count)
        law: Pmf = self._laws[key]
        return law

    def ratio(self, draw: Noise, count: int, other: int) -> Any:
        """The largest likelihood ratio of the sampler's laws at two counts (``None``:
        infinite)."""
        key = (id(draw.sampler), count, other)
        if key not in self._laws:
            self._laws[key] = max_likelihood_ratio(self.law(draw, count), self.law(draw, other))
        return self._laws[key]


def _noise(draw: object) -> Noise:
    if not isinstance(draw, Noise):
        raise NotSupported(f"the program draws a {type(draw).__name__}, not only Noise requests")
    return draw


def probability(replays: Replays, draw: Noise, outcome: tuple[int, ...]) -> Any:
    """The exact probability of one request's outcome."""
    p = mpq(1)
    for count, value in zip(draw.counts, outcome, strict=True):
        p *= replays.law(draw, count).prob(value)
    return p


def _at_least(pmf: Pmf, floor: Any) -> Iterator[tuple[int, Any]]:
    """Every (z, P(z)) with P(z) ≥ floor: the explicit window, then each geometric tail while
    it stays above the floor (it only decreases)."""
    for z in pmf:
        if pmf[z] >= floor and pmf[z] > 0:
            yield z, pmf[z]
    if pmf.tail_ratio is None:
        return
    for start, step in ((pmf.high + 1, 1), (pmf.low - 1, -1)):
        z = start
        while (p := pmf.prob(z)) >= floor:
            yield z, p
            z += step


def _kept(replays: Replays, draw: Noise, floor: Any) -> list[tuple[tuple[int, ...], Any]]:
    """The request's outcomes of probability ≥ *floor*, coordinate by coordinate."""
    laws = [replays.law(draw, c) for c in draw.counts]
    found: list[tuple[tuple[int, ...], Any]] = []

    def extend(i: int, prefix: tuple[int, ...], p: Any) -> None:
        if i == len(laws):
            found.append((prefix, p))
            return
        for z, q in _at_least(laws[i], floor / p):
            extend(i + 1, (*prefix, z), p * q)

    extend(0, (), mpq(1))
    return found


def window_law(replays: Replays, threshold: Any, key: Callable[[Any], Hashable]) -> dict[Cell, Any]:
    """The exact probability of every cell (see the module docstring), summing to 1."""
    cells: dict[Cell, Any] = {}

    def explore(prefix: tuple[Any, ...], p: Any) -> None:
        draw, output = replays.step(prefix)
        if draw is None:
            cell = ("out", key(output))
            cells[cell] = cells.get(cell, mpq(0)) + p
            return
        inside = mpq(0)
        for outcome, q in _kept(replays, draw, threshold / p):
            inside += q
            explore((*prefix, outcome), p * q)
        if inside < 1:
            cell = _left(prefix)
            cells[cell] = cells.get(cell, mpq(0)) + p * (1 - inside)

    explore((), mpq(1))
    return cells


def cell_of(
    replays: Replays,
    transcript: Transcript,
    output: Any,
    threshold: Any,
    key: Callable[[Any], Hashable],
) -> Cell:
    """The cell of a recorded transcript (the rule :func:`window_law` enumerates by)."""
    p: Any = mpq(1)
    prefix: tuple[Any, ...] = ()
    for draw, outcome in transcript:
        q = probability(replays, _noise(draw), tuple(outcome))
        if p * q < threshold:
            return _left(prefix)
        p, prefix = p * q, (*prefix, tuple(outcome))
    return ("out", key(output))


def _left(prefix: tuple[Any, ...]) -> Cell:
    """The cell of the transcripts leaving the window after *prefix*: its depth and its first
    outcome (PrivHist's released N), so that the cells stay few enough for the χ² test's
    power."""
    return ("left", len(prefix), prefix[:1])


def coupled_ratio(
    first: Replays, second: Replays, bound: Any, same: Callable[[Any, Any], bool]
) -> Any:
    """The largest coupled likelihood ratio over the enumerated histories (see the module
    docstring), or ``None`` (infinite) where no coupling tried makes the transcripts align."""

    def explore(a: tuple[Any, ...], b: tuple[Any, ...]) -> Any:
        draw, out = first.step(a)
        other, other_out = second.step(b)
        if draw is None or other is None:
            return mpq(1) if draw is None and other is None and same(out, other_out) else None
        if draw.sampler is not other.sampler or len(draw.counts) != len(other.counts):
            return None
        best: Any = None
        last = len(draw.counts) > 1 and first.step((*a, _unmoved(draw)))[0] is None
        outcomes = _histories(draw, last)
        for shift in _shifts(draw, other):
            here = _request_ratio(first, draw, other, shift)
            if here is None:
                continue
            worst: Any = mpq(1)
            for outcome in outcomes:
                moved = tuple(y + s for y, s in zip(outcome, shift, strict=True))
                below = explore((*a, outcome), (*b, moved))
                if below is None:
                    worst = None
                    break
                worst = max(worst, below)
            if worst is not None and (best is None or here * worst < best):
                best = here * worst
            if best is not None and best <= bound:
                break
        return best

    return explore((), ())


def _shifts(draw: Noise, other: Noise) -> list[tuple[int, ...]]:
    same_outcome = tuple(0 for _ in draw.counts)
    same_noise = tuple(int(d) - int(c) for c, d in zip(draw.counts, other.counts, strict=True))
    return [same_outcome] if same_noise == same_outcome else [same_outcome, same_noise]


def _request_ratio(replays: Replays, draw: Noise, other: Noise, shift: tuple[int, ...]) -> Any:
    """sup over outcomes z of P(z | c)/P(z + s | c′) and back, exactly (``None``: infinite)."""
    ratio: Any = mpq(1)
    for c, d, s in zip(draw.counts, other.counts, shift, strict=True):
        if int(c) != int(d) - s:
            single = replays.ratio(draw, int(c), int(d) - s)
            if single is None:
                return None
            ratio *= single
    return ratio


def _unmoved(draw: Noise) -> tuple[int, ...]:
    return tuple(int(c) for c in draw.counts)


def _histories(draw: Noise, last: bool) -> list[tuple[int, ...]]:
    """The outcomes of a request followed in the coupled check: a scalar request's within
    :data:`RADIUS` of its count; a vector request's count itself, and when the release ends
    after it (*last*: no request follows its count) :data:`VECTOR_SPREAD`
    outcomes with every coordinate moved up to 3·RADIUS (a fixed pseudo-random choice per count
    vector), and each coordinate moved alone within :data:`RADIUS`, so that outputs computed
    from noisy vectors out of order, below zero or pooled are compared at the leaves too (a
    vector of more than :data:`MOVED_ALONE` coordinates: its count and :data:`LONG_SPREAD`
    outcomes, since each leaf replays the whole release)."""
    counts = _unmoved(draw)
    if len(counts) == 1:
        return [(counts[0] + d,) for d in range(-RADIUS, RADIUS + 1)]
    if not last:
        return [counts]
    found = {counts}
    short = len(counts) <= MOVED_ALONE
    if short:
        for i, d in itertools.product(range(len(counts)), range(-RADIUS, RADIUS + 1)):
            found.add((*counts[:i], counts[i] + d, *counts[i + 1 :]))
    spread = SeededSource(zlib.crc32(repr(counts).encode()))  # a fixed choice of outcomes
    for _ in range(VECTOR_SPREAD if short else LONG_SPREAD):
        found.add(tuple(c + spread.uniform(6 * RADIUS + 1) - 1 - 3 * RADIUS for c in counts))
    return sorted(found)
