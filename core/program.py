"""Randomised algorithms written once, run two ways: sampled, or their exact output law.

A *program* is a generator that yields :class:`Draw` requests and receives their outcomes, then
returns its output. :func:`run` answers each request from a
:class:`~dpplug.randomness.RandomSource` (through :meth:`RandomSource.serve
<dpplug.randomness.RandomSource.serve>`); :func:`law` enumerates every outcome of every request
with its exact probability and returns the exact law of the output.

A mechanism whose every draw is *served* this way (its programs run by :func:`run`, its noise
asked by :func:`noise`) declares :class:`~dpplug.structures.ServedDraws`, and :func:`served_law`
computes the exact law of any of its calls, the real entry point on the real data, by serving
each draw from the enumeration (feasible on tiny inputs): an exact check such as "KH′ has the
law of KeepHeavy" (Balcer & Vadhan, full version Prop. 6.5) tests the code that releases, not a
re-derivation of it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import product
from numbers import Integral
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported, PluginFault
from dpplug.randomness import RandomSource

if TYPE_CHECKING:  # the kinds import the release laws, which import this module
    from dpplug.kinds.sampler.base import CountingQuerySampler

T = TypeVar("T")
Program = Generator["Draw", Any, T]
#: What :func:`law` lets check each draw before enumerating it.
Inspect = Callable[["Draw"], "Draw"]


class Draw(ABC):
    """One request for randomness: sample it, or give its exact finite law.

    ``key``: ``None``, or a hashable value that the draws of one program share only when they
    have the same law, so that :func:`law` computes that law once per enumeration.
    """

    key: Hashable | None = None

    @abstractmethod
    def sample(self, source: RandomSource) -> Any: ...

    @abstractmethod
    def law(self) -> Mapping[Any, Any]:
        """Outcome → exact probability (an ``mpq``), summing to 1."""


class Uniform(Draw):
    """U(k): a uniform integer in [1, k] (Balcer–Vadhan's oracle)."""

    def __init__(self, k: int) -> None:
        self.k = k

    def sample(self, source: RandomSource) -> int:
        return source.uniform(self.k)

    def law(self) -> dict[int, Any]:
        return {u: mpq(1, self.k) for u in range(1, self.k + 1)}


class Categorical(Draw):
    """An outcome from a finite exact law, by inverse CDF over one uniform draw U(D), where D
    is the common denominator of the probabilities (exact, no rounding)."""

    def __init__(self, probabilities: Mapping[Any, Any]) -> None:
        self.probabilities = {k: mpq(p) for k, p in probabilities.items() if p}

    def sample(self, source: RandomSource) -> Any:
        denominator = math.lcm(*(int(p.denominator) for p in self.probabilities.values()))
        u = source.uniform(denominator)
        total = 0
        outcome = None
        for outcome, p in self.probabilities.items():
            total += int(p * denominator)
            if u <= total:
                return outcome
        return outcome

    def law(self) -> dict[Any, Any]:
        return dict(self.probabilities)


class Noise(Draw):
    """The noisy counts M(c, U) of a sampler for a sequence of true counts, as a tuple."""

    def __init__(self, sampler: CountingQuerySampler, counts: Sequence[int]) -> None:
        self.sampler, self.counts = sampler, list(counts)

    def sample(self, source: RandomSource) -> tuple[int, ...]:
        noisy: list[int] = self.sampler.sample(self.counts, source).tolist()
        return tuple(noisy)

    def law(self) -> dict[tuple[int, ...], Any]:
        laws = [self.sampler.pmf(c) for c in self.counts]
        result: dict[tuple[int, ...], Any] = {}
        for outcome in product(*(law.keys() for law in laws)):
            p = mpq(1)
            for law, value in zip(laws, outcome, strict=True):
                p *= law[value]
            result[outcome] = p
        return result


class Independent(Draw):
    """The outputs of independent sub-programs, as a tuple: sampled by running them one after
    the other (the same draws, in the same order, as ``yield from`` each), and with the product
    of their laws as its law, so that an enumeration computes each sub-program's law once
    instead of replaying it under every outcome of the others."""

    def __init__(
        self, *programs: Callable[[], Program[Any]], inspect: Inspect | None = None
    ) -> None:
        """*inspect*: passed to :func:`law` for each part's law."""
        self.programs, self.inspect = programs, inspect

    def sample(self, source: RandomSource) -> tuple[Any, ...]:
        return tuple(run(program, source) for program in self.programs)

    def law(self) -> dict[tuple[Any, ...], Any]:
        result: dict[tuple[Any, ...], Any] = {(): mpq(1)}
        for program in self.programs:
            part = law(program, self.inspect)
            result = {
                (*outcome, value): p * q
                for outcome, p in result.items()
                for value, q in part.items()
            }
        return result


class Prefix:
    """A uniform b-bit integer u, revealed most significant bits first: :meth:`top` returns
    ⌊u / 2^{b−r}⌋, drawing only the bits not seen yet."""

    def __init__(self, bits: int, draw: Callable[[int], int]) -> None:
        self.bits, self._draw = bits, draw
        self._known, self._value = 0, 0

    def top(self, r: int) -> int:
        r = min(r, self.bits)
        while self._known < r:
            chunk = min(max(64, self._known), self.bits - self._known)
            self._value = (self._value << chunk) | self._draw(chunk)
            self._known += chunk
        return self._value >> (self._known - r)


class Bits(Draw):
    """A uniform b-bit integer u, revealed lazily to a deterministic *decide* (a function of the
    whole integer: it only reads more bits when it needs them).

    Sampling hands *decide* a :class:`Prefix` drawing from the source. The law does not
    enumerate the 2^b values: it runs *decide* on symbolic prefixes (:class:`SymbolicPrefix`),
    each standing for every u of an interval [L, H), and splits an interval only where a
    comparison *decide* makes flips, so its cost is the number of pieces, not 2^b.

    **Why the law is exact.** On [L, H), ``top(r)`` is the integer ⌊u/2^{b−r}⌋ itself when it
    is the same for every u of the interval, and otherwise a :class:`Cell`: a value f(⌊u/2^s⌋)
    with f a composition of non-decreasing integer maps (the only operations a Cell allows:
    ``+``/``−`` an integer, ``*`` a positive integer, ``<<``/``>>`` a non-negative shift, ``//`` a
    positive integer). So every comparison of a Cell with an integer is a monotone predicate of u:
    constant over the interval when it agrees at L and H − 1 (then it answers), and otherwise
    changing value exactly once, at a u found by binary search, where the interval is split and
    both halves are run again. Any other use of a Cell (``int()``, ``bool()``, ``==``, hashing,
    indexing, comparing two Cells, an operation not listed, returning it) raises, and the law
    raises :class:`~dpplug.errors.NotSupported`. A run that finishes has therefore answered every
    question about u identically for every u of its interval; *decide* being deterministic (and
    not inspecting the type of what ``top`` returns), it returns the same outcome for each of
    them, which has probability (H − L)/2^b. The pieces partition [0, 2^b), so the law is exact
    by construction, whatever *decide* computes; nothing is assumed about its monotonicity. More
    than :data:`MAX_PIECES` pieces raise NotSupported.
    """

    def __init__(
        self, bits: int, decide: Callable[[Prefix], Any], key: Hashable | None = None
    ) -> None:
        """*key*: ``None``, or a value equal for two draws of one program only if their
        *decide* functions return the same outcome for every u (see :class:`Draw`)."""
        self.bits, self.decide = bits, decide
        self.key = None if key is None else (Bits, bits, key)

    def sample(self, source: RandomSource) -> Any:
        return self.decide(Prefix(self.bits, source.bits))

    def law(self) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for low, high, outcome in pieces(self.bits, self.decide):
            result[outcome] = result.get(outcome, mpq(0)) + mpq(high - low, 1 << self.bits)
        return result


#: The most pieces :meth:`Bits.law` splits [0, 2^b) into.
MAX_PIECES = 1 << 16


def pieces(
    bits: int, decide: Callable[[Prefix], Any], limit: int = MAX_PIECES
) -> list[tuple[int, int, Any]]:
    """(L, H, outcome) for intervals [L, H) partitioning [0, 2^bits) on each of which *decide*
    returns *outcome* (see :class:`Bits`); NotSupported if *decide* uses u other than through
    monotone operations and comparisons, or needs more than *limit* pieces."""
    found: list[tuple[int, int, Any]] = []
    pending = [(0, 1 << bits)]
    while pending:
        low, high = pending.pop()
        try:
            outcome = decide(SymbolicPrefix(bits, low, high))
            hash(outcome)
        except _Split as split:
            pending += [(split.at, high), (low, split.at)]
            if len(found) + len(pending) > limit:
                raise NotSupported(
                    f"the law of a {bits}-bit draw needs more than {limit} pieces"
                ) from None
            continue
        except (_Misuse, TypeError, AttributeError) as exc:
            raise NotSupported(
                f"the decision on a {bits}-bit draw uses the drawn value other than through "
                f"monotone operations and comparisons ({exc}), so its law cannot be computed "
                "by splitting"
            ) from None
        if isinstance(outcome, Cell):
            raise NotSupported(f"the decision on a {bits}-bit draw returns the drawn value itself")
        found.append((low, high, outcome))
    return found


class _Split(BaseException):
    """A comparison is not constant on the interval: it flips at u = ``at``. (Like
    :class:`_Misuse`, a BaseException, so that no ``except Exception`` in *decide* hides it.)"""

    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.at = at


class _Misuse(BaseException):
    """A Cell was used other than through the operations :class:`Bits` allows."""


class SymbolicPrefix(Prefix):
    """Every u in [low, high) at once (:class:`Bits`): ``top(r)`` is an integer where the top r
    bits are the same throughout, else a :class:`Cell`."""

    def __init__(self, bits: int, low: int, high: int) -> None:
        super().__init__(bits, _no_draw)
        self.low, self.high = low, high

    def top(self, r: int) -> Any:  # int or Cell
        shift = self.bits - min(r, self.bits)
        if self.low >> shift == (self.high - 1) >> shift:
            return self.low >> shift
        return Cell(self.low, self.high, shift, lambda cell: cell)


def _no_draw(count: int) -> int:
    raise _Misuse("a symbolic prefix draws nothing")


def _integer(value: object) -> int:
    if isinstance(value, Integral) and not isinstance(value, bool):
        return int(value)
    raise _Misuse(f"a drawn value met a {type(value).__name__}")


class Cell:
    """f(⌊u/2^shift⌋) for every u in [low, high), f non-decreasing (see :class:`Bits`)."""

    def __init__(self, low: int, high: int, shift: int, f: Callable[[int], int]) -> None:
        self._low, self._high, self._shift, self._f = low, high, shift, f

    def _at(self, u: int) -> int:
        return self._f(u >> self._shift)

    def _then(self, g: Callable[[int], int]) -> Cell:
        f = self._f
        return Cell(self._low, self._high, self._shift, lambda cell: g(f(cell)))

    def __add__(self, other: object) -> Cell:
        k = _integer(other)
        return self._then(lambda x: x + k)

    __radd__ = __add__

    def __sub__(self, other: object) -> Cell:
        k = _integer(other)
        return self._then(lambda x: x - k)

    def __mul__(self, other: object) -> Cell:
        k = _integer(other)
        if k <= 0:
            raise _Misuse("a drawn value multiplied by a non-positive number")
        return self._then(lambda x: x * k)

    __rmul__ = __mul__

    def __lshift__(self, other: object) -> Cell:
        k = _integer(other)
        if k < 0:
            raise _Misuse("a drawn value shifted by a negative count")
        return self._then(lambda x: x << k)

    def __rshift__(self, other: object) -> Cell:
        k = _integer(other)
        if k < 0:
            raise _Misuse("a drawn value shifted by a negative count")
        return self._then(lambda x: x >> k)

    def __floordiv__(self, other: object) -> Cell:
        k = _integer(other)
        if k <= 0:
            raise _Misuse("a drawn value divided by a non-positive number")
        return self._then(lambda x: x // k)

    def _compare(self, other: object, holds: Callable[[int, int], bool]) -> bool:
        """The comparison if constant on the interval, else :class:`_Split` where it flips
        (a monotone predicate of u: f is non-decreasing)."""
        k = _integer(other)
        first, last = holds(self._at(self._low), k), holds(self._at(self._high - 1), k)
        if first == last:
            return first
        low, high = self._low, self._high - 1  # holds(low) = first, holds(high) = last
        while high - low > 1:
            mid = (low + high) // 2
            if holds(self._at(mid), k) == first:
                low = mid
            else:
                high = mid
        raise _Split(high)

    def __lt__(self, other: object) -> bool:
        return self._compare(other, lambda x, k: x < k)

    def __le__(self, other: object) -> bool:
        return self._compare(other, lambda x, k: x <= k)

    def __gt__(self, other: object) -> bool:
        return self._compare(other, lambda x, k: x > k)

    def __ge__(self, other: object) -> bool:
        return self._compare(other, lambda x, k: x >= k)

    def __eq__(self, other: object) -> bool:
        raise _Misuse("a drawn value compared with ==")

    def __ne__(self, other: object) -> bool:
        raise _Misuse("a drawn value compared with !=")

    def __hash__(self) -> int:
        raise _Misuse("a drawn value hashed")

    def __bool__(self) -> bool:
        raise _Misuse("a drawn value used as a truth value")

    def __int__(self) -> int:
        raise _Misuse("a drawn value converted to an integer")

    def __index__(self) -> int:
        raise _Misuse("a drawn value used as an index")


#: The transcript :func:`run` appends to inside :func:`recording` (``None`` outside).
_TRANSCRIPT: ContextVar[list[tuple[Draw, Any]] | None] = ContextVar("transcript", default=None)


@contextmanager
def recording() -> Iterator[list[tuple[Draw, Any]]]:
    """The (draw, outcome) pairs that every :func:`run` and :func:`noise` inside the block
    answers, in order: a release whose draws are served reveals the noise it drew (the
    sampling-law contract classifies real releases by it, docs/conformance.md)."""
    transcript: list[tuple[Draw, Any]] = []
    token = _TRANSCRIPT.set(transcript)
    try:
        yield transcript
    finally:
        _TRANSCRIPT.reset(token)


def run(program: Callable[[], Program[T]], source: RandomSource) -> T:
    """The program's output, with every draw answered from *source* (and recorded inside
    :func:`recording`)."""
    generator = program()
    try:
        draw = next(generator)
        while True:
            draw = generator.send(_served(draw, source))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _served(draw: Draw, source: RandomSource) -> Any:
    """*source*'s outcome of *draw*, recorded inside :func:`recording`."""
    outcome = source.serve(draw)
    transcript = _TRANSCRIPT.get()
    if transcript is not None:
        transcript.append((draw, outcome))
    return outcome


def law(program: Callable[[], Program[T]], inspect: Inspect | None = None) -> dict[T, Any]:
    """The exact law of the program's output: outcome → ``mpq``.

    *inspect*, if given, sees each draw whose outcomes are about to be enumerated (not the
    draws replayed along a path) and returns the draw to enumerate, or raises to refuse it.

    Every path is replayed from the start (generators cannot be copied), so the cost is the
    number of paths times their length: for tiny instances only. The law of a draw with a
    ``key`` is computed once per key. A path's probability is carried as an unreduced
    numerator and denominator (products of the draws' own), and the paths of each outcome are
    summed per denominator in integers, so no rational is reduced until the end (the
    denominators of a sampler's law can have thousands of bits).
    """

    return enumerate_law(program_steps(program), inspect)


#: A computation replayed along a path: given the outcomes of its draws so far, (the next draw,
#: None), or (None, its output) once it is done.
Step = Callable[[Sequence[Any]], tuple["Draw | None", Any]]


def program_steps(program: Callable[[], Program[Any]]) -> Step:
    """A program replayed along a path (from the start: generators cannot be copied)."""

    def step(prefix: Sequence[Any]) -> tuple[Draw | None, Any]:
        generator = program()
        try:
            draw = next(generator)
            for outcome in prefix:
                draw = generator.send(outcome)
        except StopIteration as stop:
            return None, stop.value
        return draw, None

    return step


def enumerate_law(step: Step, inspect: Inspect | None = None) -> dict[Any, Any]:
    """The exact law of the output of a computation replayed by *step* (:data:`Step`), every
    draw's outcomes enumerated (*inspect* as in :func:`law`)."""
    sums: dict[Any, dict[int, int]] = {}
    shared: dict[Hashable, Mapping[Any, Any]] = {}

    def law_of(draw: Draw) -> Mapping[Any, Any]:
        if draw.key is None:
            return draw.law()
        if draw.key not in shared:
            shared[draw.key] = draw.law()
        return shared[draw.key]

    def explore(prefix: list[Any], numerator: int, denominator: int) -> None:
        draw, output = step(prefix)
        if draw is None:
            per_denominator = sums.setdefault(output, {})
            per_denominator[denominator] = per_denominator.get(denominator, 0) + numerator
            return
        if inspect is not None:
            draw = inspect(draw)
        for outcome, p in law_of(draw).items():
            p = mpq(p)
            explore(
                [*prefix, outcome],
                numerator * int(p.numerator),
                denominator * int(p.denominator),
            )

    explore([], 1, 1)
    return {
        outcome: sum((mpq(n, d) for d, n in per_denominator.items()), mpq(0))
        for outcome, per_denominator in sums.items()
    }


def noise(
    sampler: CountingQuerySampler, counts: npt.ArrayLike, source: RandomSource
) -> npt.NDArray[np.int64]:
    """The sampler's noisy counts for *counts* (an integer array, same shape), asked as one
    served :class:`Noise` draw, so that the exact law of the caller can be computed
    (:func:`served_law`)."""
    array = np.asarray(counts, dtype=np.int64)
    if type(source).serve is RandomSource.serve and _TRANSCRIPT.get() is None:
        return sampler.sample(array, source)  # what serving would draw, without the copies
    outcome = _served(Noise(sampler, array.reshape(-1).tolist()), source)
    return np.array(outcome, dtype=np.int64).reshape(array.shape)


#: Raw draws (``bits``, ``uniform``) of at most this many outcomes are served as :class:`Uniform`
#: draws when a law is computed by :func:`served_law`; larger ones have no enumerable law.
MAX_RAW_OUTCOMES = 1 << 16


class _NeedOutcome(BaseException):
    """The served call asked for a draw past its script. (A BaseException, so that no ``except
    Exception`` in the code under replay hides it.)"""

    def __init__(self, draw: Draw) -> None:
        super().__init__(draw)
        self.draw = draw


class _Unserved(BaseException):
    """The served call drew randomness that cannot be served from an enumeration."""


class _ServingSource(RandomSource):
    """Serves each draw the outcome of a script, in order; a draw past the script stops the
    call (:class:`_NeedOutcome`). Raw draws of few outcomes are served as :class:`Uniform`
    draws; raw bytes and larger raw draws stop it (:class:`_Unserved`)."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__()
        self._script, self._next = script, 0

    def serve(self, draw: Draw) -> Any:
        self.draws += 1
        if self._next == len(self._script):
            raise _NeedOutcome(draw)
        outcome = self._script[self._next]
        self._next += 1
        return outcome

    def random_bytes(self, count: int) -> bytes:
        raise _Unserved(f"{count} raw random bytes")

    def bits(self, k: int) -> int:
        if k > MAX_RAW_OUTCOMES.bit_length() - 1:
            raise _Unserved(f"a raw {k}-bit integer")
        return int(self.serve(Uniform(1 << k))) - 1 if k else 0

    def uniform(self, d: int) -> int:
        if int(d) > MAX_RAW_OUTCOMES:
            raise _Unserved(f"a raw uniform integer in [1, {int(d):,}]")
        return int(self.serve(Uniform(int(d))))

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        return np.array([self.bits(k) for _ in range(size)], dtype=np.uint64)

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        return np.array([self.uniform(d) for _ in range(size)], dtype=np.int64)


def served_law(call: Callable[[RandomSource], T], inspect: Inspect | None = None) -> dict[T, Any]:
    """The exact law of ``call(source)``'s output, from the code itself: every draw it asks its
    source to serve (:meth:`~dpplug.randomness.RandomSource.serve`) is enumerated with its exact
    probability, the call run once per node of the tree of outcomes (*inspect* as in
    :func:`law`). NotSupported where a draw has no finite law; PluginFault where the call draws
    raw randomness of more than :data:`MAX_RAW_OUTCOMES` outcomes (a mechanism declaring
    :class:`~dpplug.structures.ServedDraws` then does not do what it declares)."""

    return enumerate_law(served_steps(call), inspect)


def served_steps(call: Callable[[RandomSource], Any]) -> Step:
    """``call(source)`` replayed along a path: run once with the path's outcomes served in
    order, it stops at the first draw past them (NotSupported for raw randomness that cannot
    be served, see :func:`served_law`)."""

    def step(prefix: Sequence[Any]) -> tuple[Draw | None, Any]:
        try:
            return None, call(_ServingSource(list(prefix)))
        except _NeedOutcome as need:
            return need.draw, None
        except _Unserved as unserved:
            raise PluginFault(
                f"it declares ServedDraws but draws {unserved} outside its served draws (ask "
                "noise through dpplug.program.noise and run programs with dpplug.program.run)"
            ) from None

    return step
