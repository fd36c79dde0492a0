"""What an implementation with unbounded rejection loops does, replayed up to a budget of path
probability: exact lower bounds on its output law and the exact mass left unexplored.

:func:`~dpplug.conformance.replay.implementation_law` explores every path of a call, which is
impossible for samplers that loop until a coin accepts (Canonne, Kamath, Steinke 2020, Alg. 1–3:
von Neumann's Bernoulli(e^{−γ}), the discrete Laplace by rejection, the discrete Gaussian by
rejection from discrete Laplace proposals) and that draw uniform integers of hundreds of bits
for their coins. :func:`bounded_law` replays such a call with a :class:`BranchingSource` whose
draws are *lazy*: a :class:`LazyUniform` is a uniform integer on a range that the code's
comparisons narrow, each comparison a branch whose two sides have the exact probabilities of
the two sub-ranges; its value is enumerated only when the code computes with it (on ranges of at
most :data:`~dpplug.conformance.replay.SMALL_DRAW` values). Raw bits (``bits(k)`` of more than
:data:`LAZY_BITS` bits, as :class:`dpplug.discrete_noise.BitStream` fetches them) are a
:class:`LazyBits` word whose low k bits, once masked off, are a fresh ``LazyUniform`` on
[0, 2^k): fresh independent bits are uniform whatever their grouping, so the code's own
chunking runs unchanged.

Paths are explored depth first, each replayed from the start; a branch whose probability is
below the budget is not explored and its probability is added to the unexplored mass. So the
result is exact in both parts: per output, the total probability of the explored paths that end
there (a lower bound on the implementation's probability of that output), and the unexplored
mass (how much more any output can have). A deviation of the code from a declared law larger
than the unexplored mass is always seen (docs/conformance.md#enclosed-laws).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.divergence import exact_text
from dpplug.conformance.replay import SMALL_DRAW, Law
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.randomness import RandomSource

#: The smallest path probability a replay against an enclosed law explores
#: (:func:`replay_against`).
REPLAY_BUDGET = mpq(1, 1 << 10)
#: The most replays of one call there (a call whose paths are finer, such as a discrete
#: Gaussian of large σ, is not replayed).
REPLAY_RUNS = 10_000

#: ``bits(k)`` of more than this many bits is served as a :class:`LazyBits` word (a chunk of
#: raw bits the code will slice); fewer bits as a :class:`LazyUniform`.
LAZY_BITS = 64


class _NeedDecision(Exception):
    def __init__(self, weights: list[int]) -> None:
        super().__init__(weights)
        self.weights = weights


class _Path:
    """The branch choices of one replay, served in order; a branch past them stops the call."""

    def __init__(self, script: list[int]) -> None:
        self.script, self.next = script, 0

    def decide(self, weights: list[int]) -> int:
        """The side taken at a branch whose sides have these (integer) weights."""
        live = [i for i, w in enumerate(weights) if w]
        if len(live) == 1:  # no choice: not a branch
            return live[0]
        if self.next == len(self.script):
            raise _NeedDecision(weights)
        choice = self.script[self.next]
        self.next += 1
        return choice


class _Range:
    """The range [lo, hi] a lazy uniform value is known to lie in (shared by its shifts)."""

    __slots__ = ("hi", "lo", "path")

    def __init__(self, path: _Path, lo: int, hi: int) -> None:
        self.path, self.lo, self.hi = path, lo, hi

    def at_most(self, t: int) -> bool:
        """Whether the value is ≤ t: a branch with the exact sizes of both sub-ranges."""
        if t < self.lo:
            return False
        if t >= self.hi:
            return True
        if self.path.decide([t - self.lo + 1, self.hi - t]) == 0:
            self.hi = t
            return True
        self.lo = t + 1
        return False

    def value(self) -> int:
        """The value itself: one branch per value left in the range."""
        size = self.hi - self.lo + 1
        if size > SMALL_DRAW:
            raise NotSupported(
                f"the code computes with a uniform value of {size:,} possible values, too many to "
                "enumerate (only comparisons with it are replayed lazily)"
            )
        self.lo = self.hi = self.lo + self.path.decide([1] * size)
        return self.lo


def _integer(other: object) -> int | None:
    """*other* as an int if it is an integer (a lazy value is resolved first), else None."""
    if isinstance(other, LazyUniform):
        return int(other)
    if isinstance(other, int) and not isinstance(other, bool):
        return other
    return None


class LazyUniform:
    """A uniform integer, offset + (a value uniform on its range), decided lazily.

    Comparisons with integers narrow the range (one branch each); ``+`` and ``−`` of an integer
    give a lazy value sharing the range; every other use enumerates the value (its range must be
    at most :data:`~dpplug.conformance.replay.SMALL_DRAW` values).
    """

    __slots__ = ("offset", "range")

    def __init__(self, cell: _Range, offset: int = 0) -> None:
        self.range, self.offset = cell, offset

    def __int__(self) -> int:
        return self.range.value() + self.offset

    __index__ = __int__

    def __hash__(self) -> int:
        return hash(int(self))

    def _at_most(self, other: object) -> bool:
        t = _integer(other)
        if t is None:
            return bool(int(self) <= other)  # type: ignore[operator]
        return self.range.at_most(t - self.offset)

    def __le__(self, other: object) -> bool:
        return self._at_most(other)

    def __lt__(self, other: object) -> bool:
        t = _integer(other)
        return self._at_most(t - 1) if t is not None else bool(int(self) < other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return not self._at_most(other)

    def __ge__(self, other: object) -> bool:
        return not self < other

    def __eq__(self, other: object) -> bool:
        t = _integer(other)
        if t is None:
            return bool(int(self) == other)
        return self._at_most(t) and not self._at_most(t - 1)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __add__(self, other: object) -> Any:
        if isinstance(other, int) and not isinstance(other, bool):
            return LazyUniform(self.range, self.offset + other)
        return int(self) + other  # type: ignore[operator]

    __radd__ = __add__

    def __sub__(self, other: object) -> Any:
        if isinstance(other, int) and not isinstance(other, bool):
            return LazyUniform(self.range, self.offset - other)
        return int(self) - other  # type: ignore[operator]

    def __rsub__(self, other: object) -> Any:
        return other - int(self)  # type: ignore[operator]

    def __mul__(self, other: object) -> Any:
        return int(self) * other  # type: ignore[operator]

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> Any:
        return int(self) // other  # type: ignore[operator]

    def __mod__(self, other: object) -> Any:
        return int(self) % other  # type: ignore[operator]

    def __neg__(self) -> int:
        return -int(self)

    def __abs__(self) -> int:
        return abs(int(self))

    def __bool__(self) -> bool:
        return self != 0


class LazyBits:
    """A word of raw random bits: fresh independent bits at positions [shift, shift + count),
    zeros elsewhere; ``taken`` of its low bits already handed out as a :class:`LazyUniform`.

    It supports what a bit buffer does with it (:class:`dpplug.discrete_noise.BitStream`):
    ``word << s``, joining two adjacent words with ``|``, masking the low k bits off with
    ``& (2^k − 1)`` (a fresh uniform on [0, 2^k)) and dropping them with ``>> k``. Any other use
    is not modelled and stops the replay (``NotSupported``).
    """

    __slots__ = ("count", "path", "shift", "taken")

    def __init__(self, path: _Path, count: int, shift: int = 0, taken: int = 0) -> None:
        self.path, self.count, self.shift, self.taken = path, count, shift, taken

    @staticmethod
    def _unmodelled(what: str) -> NotSupported:
        return NotSupported(f"the code uses raw random bits ({what}) in a way not replayed lazily")

    def __lshift__(self, s: int) -> LazyBits:
        return LazyBits(self.path, self.count, self.shift + s, self.taken)

    def __or__(self, other: object) -> LazyBits:
        if isinstance(other, int) and other == 0:
            return self
        if (
            isinstance(other, LazyBits)
            and self.shift == 0
            and self.taken == 0
            and other.taken == 0
            and other.shift == self.count
        ):
            return LazyBits(self.path, self.count + other.count)
        raise self._unmodelled("| of overlapping words")

    __ror__ = __or__

    def __and__(self, mask: object) -> Any:
        if not isinstance(mask, int) or mask & (mask + 1):
            raise self._unmodelled("& with a mask other than 2^k − 1")
        k = mask.bit_length()
        if k == 0:
            return 0
        if self.shift or self.taken or k > self.count:
            raise self._unmodelled("& of bits already used or not drawn")
        self.taken = k
        return LazyUniform(_Range(self.path, 0, mask))

    def __rshift__(self, k: int) -> LazyBits:
        if self.shift or self.taken > k or k > self.count:
            raise self._unmodelled(">> of bits not handed out")
        return LazyBits(self.path, self.count - k)


class BranchingSource(RandomSource):
    """A source whose draws are lazy values decided by the branches of one :class:`_Path`."""

    def __init__(self, path: _Path) -> None:
        super().__init__()
        self.path = path

    def random_bytes(self, count: int) -> bytes:
        raise NotSupported("raw random bytes are not replayed lazily")

    def bits(self, k: int) -> Any:
        self.draws += 1
        if k > LAZY_BITS:
            return LazyBits(self.path, k)
        return LazyUniform(_Range(self.path, 0, (1 << k) - 1)) if k else 0

    def uniform(self, d: int) -> Any:
        self.draws += 1
        return LazyUniform(_Range(self.path, 1, int(d)))

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        raise NotSupported("vectorised draws are not replayed lazily")

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        raise NotSupported("vectorised draws are not replayed lazily")


@dataclass(frozen=True)
class BoundedLaw:
    """The explored part of a call's law: ``found[y]`` is the exact probability of the explored
    paths ending in output y, ``unexplored`` the exact probability of the paths cut at the
    budget (``Σ found + unexplored = 1``), ``runs`` the number of replays."""

    found: Law
    unexplored: Rat
    runs: int


def bounded_law(
    call: Callable[[RandomSource], Hashable], budget: Rat, max_runs: int = 200_000
) -> BoundedLaw:
    """Replay ``call(source)`` along every path whose probability is at least *budget* (see the
    module docstring); ``NotSupported`` past *max_runs* replays or on a use of randomness that
    is not replayed lazily."""
    found: Law = {}
    unexplored, runs = mpq(0), 0
    stack: list[tuple[list[int], Rat]] = [([], mpq(1))]
    while stack:
        script, probability = stack.pop()
        runs += 1
        if runs > max_runs:
            raise NotSupported(f"the bounded replay needs more than {max_runs} runs")
        try:
            output = call(BranchingSource(_Path(script)))
        except _NeedDecision as need:
            total = sum(need.weights)
            for side, weight in reversed(list(enumerate(need.weights))):
                child = probability * mpq(weight, total)
                if weight == 0:
                    continue
                if child < budget:
                    unexplored += child
                else:
                    stack.append(([*script, side], child))
            continue
        found[output] = found.get(output, mpq(0)) + probability
    return BoundedLaw(found, unexplored, runs)


def replay_against(
    call: Callable[[RandomSource], int],
    declared: EnclosedLaw,
    what: str,
    show: Callable[[int], str] = str,
) -> tuple[str | None, Rat]:
    """*call* replayed down to :data:`REPLAY_BUDGET` (:func:`bounded_law`) against the enclosed
    law it declares: (how the code contradicts it, in words, or None; the unexplored mass U).

    The explored paths give each output an exact lower bound found(y) on the code's probability,
    so the code contradicts the law when found(y) > hi(y) (the mass outside the window against
    the outside bound) or found(y) + U < lo(y). Any deviation of total-variation distance above U
    plus the enclosure's width is seen. *what* names the call and *show* an output in the
    text."""
    replay = bounded_law(call, REPLAY_BUDGET, REPLAY_RUNS)
    found, unexplored = replay.found, replay.unexplored
    outside = sum((p for y, p in found.items() if y not in declared.window()), mpq(0))
    if outside > declared.outside:
        return (
            f"{what} gives outputs outside [{show(declared.low)}, {show(declared.high)}] with "
            f"probability at least {exact_text(outside)}, but its enclosed law bounds them by "
            f"{exact_text(declared.outside)}"
        ), unexplored
    for y in declared.window():
        at_least = found.get(y, mpq(0))
        if at_least > declared.hi(y) or at_least + unexplored < declared.lo(y):
            bound = "at least" if at_least > declared.hi(y) else "at most"
            shown = at_least if at_least > declared.hi(y) else at_least + unexplored
            return (
                f"{what} gives {show(y)} with probability {bound} {float(shown):.6g} (replayed "
                f"exactly, {replay.runs} runs), but its enclosed law puts it in "
                f"[{float(declared.lo(y)):.6g}, {float(declared.hi(y)):.6g}]"
            ), unexplored
    return None, unexplored
