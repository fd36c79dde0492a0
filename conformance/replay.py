"""The exact law of what an implementation does, by replaying it with scripted randomness.

A call that draws only through a :class:`~dpplug.randomness.RandomSource` is a deterministic
function of the values its draws return. :func:`implementation_law` runs the call with a
:class:`ScriptedSource` that serves a script of values and stops the call at the first draw past
the script; every outcome of that draw is then explored, each path replayed from the start, and
the paths' outputs weighted by their exact probabilities. The result is the exact law of the
*code*, which the contracts compare with the law the plugin *declares* (its pmf, its keep
probability, its release law): a plugin whose implementation disagrees with its declaration is
caught wherever the replay is feasible, not only where sampling happens to notice.

A draw with few outcomes (at most :data:`SMALL_DRAW`) is split into all of them. A larger draw
that is the call's last is split at the points where the output changes, found by bisection of
the output as a function of the drawn value; this is exact for implementations whose output is
monotone in their last draw (inverse-CDF samplers, threshold decisions), and every piece found is
also probed at random points, so a value out of place inside a piece is caught with high
probability: a deviation of total variation f inside a piece of probability p covers a share f/p
of its values, which :data:`PROBES_PER_PIECE` random points miss with probability (1 − f/p)^16,
so :attr:`Replayed.code_tv`, p·(1 − 2^(−1/16)) for the most probable piece checked only at
random points, is the smallest deviation seen with probability at least 1/2. A large draw
followed by further draws, or a tree of more than ``max_runs`` replays, cannot be replayed:
:class:`~dpplug.errors.NotSupported` says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.randomness import RandomSource, SeededSource

#: Draws with at most this many outcomes are explored outcome by outcome.
SMALL_DRAW = 1 << 12
#: Random points probed inside each piece a large draw is split into.
PROBES_PER_PIECE = 16

#: A piece of probability p holding a deviation of total variation p·SPOT_SHARE is seen with
#: probability 1/2 by :data:`PROBES_PER_PIECE` random points.
SPOT_SHARE = 1 - 2 ** (-1 / PROBES_PER_PIECE)

Draw = tuple[str, int]  # ("bits", k): a value in [0, 2^k); ("uniform", d): a value in [1, d]
Law = dict[Hashable, Any]  # output → mpq


class _NeedDraw(Exception):
    def __init__(self, draw: Draw) -> None:
        super().__init__(draw)
        self.draw = draw


def _range(draw: Draw) -> tuple[int, int]:
    """The inclusive range of values a draw returns."""
    kind, size = draw
    return (0, (1 << size) - 1) if kind == "bits" else (1, size)


class ScriptedSource(RandomSource):
    """A source whose draws return the values of a script, in order; a draw past the end of the
    script stops the call (:class:`_NeedDraw`). Raw bytes are served as 8-bit draws."""

    def __init__(self, script: list[int]) -> None:
        super().__init__()
        self._script, self._next = script, 0

    def _value(self, draw: Draw) -> int:
        self.draws += 1
        if self._next == len(self._script):
            raise _NeedDraw(draw)
        value = self._script[self._next]
        self._next += 1
        return value

    def random_bytes(self, count: int) -> bytes:
        return bytes(self._value(("bits", 8)) for _ in range(count))

    def bits(self, k: int) -> int:
        return self._value(("bits", k)) if k else 0

    def uniform(self, d: int) -> int:
        return self._value(("uniform", int(d)))

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        return np.array([self.bits(k) for _ in range(size)], dtype=np.uint64)

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        return np.array([self.uniform(d) for _ in range(size)], dtype=np.int64)


@dataclass(frozen=True)
class Replayed:
    """What a replay found: the exact law of the code's output (exact for code monotone in its
    large draws), and the smallest total-variation deviation from it that the random points
    inside pieces see with probability at least 1/2 (0 when every value was run)."""

    law: Law
    code_tv: float


def implementation_law(
    call: Callable[[RandomSource], Hashable],
    max_runs: int = 100_000,
    seed: int = 0,
    splits: Callable[[Draw], list[int]] | None = None,
) -> Replayed:
    """The exact law of ``call(source)``'s output, from its code (see the module docstring).

    *seed* chooses the random points probed inside the pieces of large draws (test inputs
    only, never a mechanism's noise). *splits* may name, for a large draw, the values after
    which the output is expected to change (a sampler's scaled CDF): the pieces between them
    are checked at both ends and bisected only where the ends disagree, so a draw of hundreds of
    bits costs a few runs per output instead of a bisection per output."""
    law: Law = {}
    runs, spot = 0, mpq(0)  # spot: the most probable piece checked only at random points
    probe_rng = np.random.default_rng(seed)

    def run(script: list[int]) -> Hashable:
        nonlocal runs
        runs += 1
        if runs > max_runs:
            raise NotSupported(f"replaying the call needs more than {max_runs} runs")
        return call(ScriptedSource(script))

    def explore(script: list[int], probability: Any) -> None:
        nonlocal spot
        try:
            output = run(script)
        except _NeedDraw as need:
            low, high = _range(need.draw)
            size = high - low + 1
            if size <= SMALL_DRAW:
                for value in range(low, high + 1):
                    explore([*script, value], probability / size)
                return
            hints = splits(need.draw) if splits is not None else []
            for first, last, output in _pieces(lambda v: _last(run, script, v), low, high, hints):
                _check_piece(lambda v: _last(run, script, v), first, last, output, probe_rng)
                mass = probability * mpq(last - first + 1, size)
                law[output] = law.get(output, mpq(0)) + mass
                if last - first >= 2:
                    spot = max(spot, mass)
            return
        law[output] = law.get(output, mpq(0)) + probability

    explore([], mpq(1))
    return Replayed(law, float(spot) * SPOT_SHARE)


def _last(run: Callable[[list[int]], Hashable], script: list[int], value: int) -> Hashable:
    """The output when a large draw returns *value*; it must be the call's last draw."""
    try:
        return run([*script, value])
    except _NeedDraw:
        raise NotSupported(
            "the call draws again after a draw too large to split outcome by outcome"
        ) from None


def _pieces(
    output_at: Callable[[int], Hashable], low: int, high: int, hints: list[int]
) -> list[tuple[int, int, Hashable]]:
    """[low, high] cut into maximal runs on which the output is constant, by bisection: a run
    whose two ends agree is taken as constant (exact for outputs monotone in the value). The
    bisection starts from the runs the *hints* delimit (each hint the last value of a run)."""
    pieces: list[tuple[int, int, Hashable]] = []
    cuts = sorted({h for h in hints if low <= h < high})
    starts, ends = [low, *(h + 1 for h in cuts)], [*cuts, high]
    stack = [(a, b, output_at(a), output_at(b)) for a, b in zip(starts, ends, strict=True)]
    while stack:
        a, b, at_a, at_b = stack.pop()
        if at_a == at_b:
            pieces.append((a, b, at_a))
        elif b == a + 1:
            pieces += [(a, a, at_a), (b, b, at_b)]
        else:
            middle = (a + b) // 2
            at_middle = output_at(middle)
            stack += [(middle, b, at_middle, at_b), (a, middle, at_a, at_middle)]
    merged: list[tuple[int, int, Hashable]] = []
    for a, b, output in sorted(pieces, key=lambda piece: piece[0]):
        if merged and merged[-1][2] == output and merged[-1][1] >= a - 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b), output)
        elif not merged or a > merged[-1][1]:
            merged.append((a, b, output))
    return merged


def _check_piece(
    output_at: Callable[[int], Hashable],
    first: int,
    last: int,
    output: Hashable,
    rng: np.random.Generator,
    probes: int = PROBES_PER_PIECE,
) -> None:
    """Random points inside a piece must give its output (the bisection assumed they do)."""
    if last - first < 2:
        return
    width = ((last - first).bit_length() + 7) // 8 + 8  # 64 spare bits: near uniform
    for _ in range(probes):
        value = first + int.from_bytes(rng.bytes(width), "little") % (last - first + 1)
        found = output_at(value)
        if found != output:
            raise ImplementationMismatch(
                f"the draw value {value} gives {found!r} inside a run of values [{first}, "
                f"{last}] that gives {output!r} at both ends: the output is not monotone in the "
                "draw, so some values are out of place"
            )


class ImplementationMismatch(Exception):
    """What the replay found contradicts the assumption it relies on: a finding, not a skip."""


# One element of a large call, explored exactly with every other draw fixed.


class _Recorder(RandomSource):
    """Draws from a seeded source and records each primitive draw the call makes, as
    ((kind, size), value) with kind "bits" or "uniform" (a vector draw counts element by
    element); raw bytes are not recorded and make the call unexplorable."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self._inner = SeededSource(seed)
        self.draws_made: list[Draw] = []
        self.values: list[int] = []

    def _note(self, draw: Draw, values: list[int]) -> None:
        self.draws_made += [draw] * len(values)
        self.values += values

    def random_bytes(self, count: int) -> bytes:
        raise NotSupported("the call draws raw random bytes")

    def bits(self, k: int) -> int:
        value = self._inner.bits(k)
        self._note(("bits", k), [value])
        return value

    def uniform(self, d: int) -> int:
        value = self._inner.uniform(d)
        self._note(("uniform", int(d)), [value])
        return value

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        values = self._inner.bits_array(k, size)
        self._note(("bits", k), values.tolist())
        return values

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        values = self._inner.uniform_array(d, size)
        self._note(("uniform", int(d)), values.tolist())
        return values


class _Fixed(RandomSource):
    """Serves the recorded draws of a call that made *count* draws alike (*draw*) again, the one
    at *position* replaced by *value*; a call that draws otherwise stops (:class:`_Diverged`)."""

    def __init__(self, draw: Draw, values: npt.NDArray[Any], position: int, value: int) -> None:
        super().__init__()
        self._draw = draw
        self._values = values.copy()
        self._values[position] = value
        self._next = 0

    def _take(self, draw: Draw, size: int) -> npt.NDArray[Any]:
        end = self._next + size
        if draw != self._draw or end > len(self._values):
            raise _Diverged
        values, self._next = self._values[self._next : end], end
        return values

    def random_bytes(self, count: int) -> bytes:
        raise _Diverged

    def bits(self, k: int) -> int:
        return int(self._take(("bits", k), 1)[0])

    def uniform(self, d: int) -> int:
        return int(self._take(("uniform", int(d)), 1)[0])

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        return self._take(("bits", k), size).astype(np.uint64)

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        return self._take(("uniform", int(d)), size).astype(np.int64)


class _Diverged(Exception):
    """The call drew otherwise than the recorded call."""


#: The slowest call :func:`one_element_law` explores (seconds of CPU per run): far above what
#: the built-ins take (milliseconds), so that a busy machine never changes what is covered.
MAX_RUN_SECONDS = 1.0
#: Random points probed inside each piece there (each costs a run of the whole call).
ELEMENT_PROBES = 4


def one_element_law(
    call: Callable[[npt.NDArray[np.int64], RandomSource], npt.NDArray[np.int64]],
    values: npt.NDArray[np.int64],
    declared: Callable[[int], Law],
    seed: int,
) -> str | None:
    """The exact law of one element of a large call, its draw explored with every other draw
    fixed, against the law *declared* for its value: what is wrong, in words, or None.

    The call is run once from ``SeededSource(seed)`` and its draws recorded; it must make one
    draw per element, all alike (otherwise NotSupported: an element's law is then not that of one
    draw). The last draw is explored over its whole range by bisection (:func:`_pieces`, with
    random points inside each piece): the one element it moves is found, and its law under
    that draw, the others fixed, must be the declared law of its value exactly; a draw that
    moves several elements is a finding (their outputs share randomness), and so is a last
    element whose output, moved by no draw, has probability 0 under its declared law."""
    recorder = _Recorder(seed)
    baseline = np.asarray(call(values, recorder))
    made = recorder.draws_made
    if len(made) != values.size or len(set(made)) != 1:
        raise NotSupported(
            f"the call makes {len(made)} draws of {len(set(made))} kinds for {values.size} "
            "elements, not one alike per element"
        )
    draw, position = made[0], len(made) - 1
    big = draw[0] == "uniform" and draw[1] > 1 << 63
    recorded = np.array(recorder.values, dtype=object if big else np.uint64)
    low, high = _range(draw)
    started = time.process_time()

    def outputs(v: int) -> npt.NDArray[np.int64]:
        try:
            return np.asarray(call(values, _Fixed(draw, recorded, position, v)))
        except _Diverged:
            raise NotSupported("the call draws otherwise when one draw changes") from None

    ends = [outputs(low), outputs(high)]
    if time.process_time() - started > 2 * MAX_RUN_SECONDS:
        raise NotSupported("the call is too slow to explore one element of it")
    moved = np.flatnonzero((ends[0] != baseline) | (ends[1] != baseline))
    if moved.size > 1:
        return (
            f"changing the call's last draw alone changes {moved.size} elements "
            f"({moved[:4].tolist()}…): its outputs share randomness"
        )
    if moved.size == 0:
        final = int(values.reshape(-1)[-1])
        given = int(baseline.reshape(-1)[-1])
        if not declared(final).get(given, 0):
            return (
                f"the last element, of value {final}, gives {given} whatever its draw (the "
                f"call's last draw changes nothing), an output its declared law gives "
                "probability 0"
            )
        raise NotSupported("the call's last draw moves no element at its two ends")
    element = int(moved[0])
    rng = np.random.default_rng(seed)  # chooses test points only

    def output_at(v: int) -> Hashable:
        found = outputs(v)
        if np.any(np.delete(found, element) != np.delete(baseline, element)):
            raise ImplementationMismatch(
                f"the draw value {v} of element {element} also changes other elements"
            )
        return int(found[element])

    law: Law = {}
    size = high - low + 1
    value = int(values.reshape(-1)[element])
    expected = {z: p for z, p in declared(value).items() if p}
    for first, last, output in _pieces(output_at, low, high, _cuts(expected, low, size)):
        _check_piece(output_at, first, last, output, rng, ELEMENT_PROBES)
        law[output] = law.get(output, mpq(0)) + mpq(last - first + 1, size)
    if law != expected:
        worst = max(
            law.keys() | expected.keys(), key=lambda z: abs(law.get(z, 0) - expected.get(z, 0))
        )
        return (
            f"element {element} (value {value}) of a call of {values.size}, its draw explored "
            f"with the others fixed, gives {worst} with probability {law.get(worst, 0)}, but "
            f"{expected.get(worst, 0)} is declared"
        )
    return None


def _cuts(law: Law, low: int, size: int) -> list[int]:
    """Where an inverse-CDF map of a draw uniform on [low, low + size) onto *law* changes its
    output, in either order of the outputs and either rounding (hints for :func:`_pieces`,
    which finds the exact points by bisection wherever they are not these)."""
    outputs = sorted(law, key=lambda z: (str(type(z)), z))
    cuts: set[int] = set()
    for order in (outputs, outputs[::-1]):
        mass = mpq(0)
        for z in order[:-1]:
            mass += law[z]
            point = mass * size
            floor = int(point.numerator // point.denominator)
            cuts |= {low + floor - 1, low + floor}
    return sorted(cuts)
