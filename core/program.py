"""Randomised algorithms written once, run two ways: sampled, or their exact output law.

A *program* is a generator that yields :class:`Draw` requests and receives their outcomes, then
returns its output. :func:`run` answers each request from a
:class:`~dpplug.randomness.RandomSource`;
:func:`law` enumerates every outcome of every request with its exact probability and returns the
exact law of the output. The releasers sample through :func:`run`; the tests and the conformance
suite compute the laws of the *same code* through :func:`law` (feasible on tiny universes), so an
exact check such as "KH′ has the law of KeepHeavy" (Balcer & Vadhan, full version Prop. 6.5)
tests the implementation, not a re-derivation of it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping, Sequence
from itertools import product
from typing import Any, TypeVar

from gmpy2 import mpq

from dpplug.kinds.sampler import CountingQuerySampler
from dpplug.randomness import RandomSource

T = TypeVar("T")
Program = Generator["Draw", Any, T]


class Draw(ABC):
    """One request for randomness: sample it, or give its exact finite law."""

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
        return tuple(int(v) for v in self.sampler.sample(self.counts, source))

    def law(self) -> dict[tuple[int, ...], Any]:
        laws = [self.sampler.pmf(c) for c in self.counts]
        result: dict[tuple[int, ...], Any] = {}
        for outcome in product(*(law.keys() for law in laws)):
            p = mpq(1)
            for law, value in zip(laws, outcome, strict=True):
                p *= law[value]
            result[outcome] = p
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
    """A uniform b-bit integer, revealed lazily to a deterministic *decide* (a function of the
    whole integer: it only reads more bits when it needs them). The law enumerates all 2^b
    values (tests use small b)."""

    def __init__(self, bits: int, decide: Callable[[Prefix], Any]) -> None:
        self.bits, self.decide = bits, decide

    def sample(self, source: RandomSource) -> Any:
        return self.decide(Prefix(self.bits, source.bits))

    def law(self) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for u in range(1 << self.bits):
            outcome = self.decide(_fixed(u, self.bits))
            result[outcome] = result.get(outcome, mpq(0)) + mpq(1, 1 << self.bits)
        return result


def _fixed(u: int, bits: int) -> Prefix:
    prefix = Prefix(bits, lambda count: 0)
    prefix._known, prefix._value = bits, u
    return prefix


def run(program: Callable[[], Program[T]], source: RandomSource) -> T:
    """The program's output, with every draw answered from *source*."""
    generator = program()
    try:
        draw = next(generator)
        while True:
            draw = generator.send(draw.sample(source))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def law(program: Callable[[], Program[T]]) -> dict[T, Any]:
    """The exact law of the program's output: outcome → ``mpq``.

    Every path is replayed from the start (generators cannot be copied), so the cost is the
    number of paths times their length: for tiny instances only.
    """
    result: dict[T, Any] = {}

    def explore(prefix: list[Any], probability: Any) -> None:
        generator = program()
        try:
            draw = next(generator)
            for outcome in prefix:
                draw = generator.send(outcome)
        except StopIteration as stop:
            result[stop.value] = result.get(stop.value, mpq(0)) + probability
            return
        for outcome, p in draw.law().items():
            explore([*prefix, outcome], probability * p)

    explore([], mpq(1))
    return result
