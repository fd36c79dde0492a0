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

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.randomness import RandomSource

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
) -> None:
    """Random points inside a piece must give its output (the bisection assumed they do)."""
    if last - first < 2:
        return
    width = ((last - first).bit_length() + 7) // 8 + 8  # 64 spare bits: near uniform
    for _ in range(PROBES_PER_PIECE):
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
