"""Sources of randomness: the U(d) oracle of Balcer & Vadhan (full version §2.1) and its bulk
counterpart.

Every mechanism draws through a :class:`RandomSource`. Two primitives exist:

- :meth:`RandomSource.bits` / :meth:`RandomSource.bits_array` return uniform k-bit integers.
  They use a **fixed number of draws** (strict running time).
- :meth:`RandomSource.uniform` / :meth:`RandomSource.uniform_array` return exact uniform integers
  in [1, d] for any d ≥ 1 (big integers too), by rejection from ⌈log₂ d⌉ bits. The result is
  exact but the running time is bounded only **in expectation** (fewer than 2 rounds on average),
  unless d is a power of two, where one round always suffices.

:class:`SystemSource` (the OS CSPRNG) is the default everywhere. :class:`SeededSource` is
reproducible and exists for tests and reports; it is never chosen silently.

Every source counts the primitive draws it has served in :attr:`RandomSource.draws` (one per
integer returned by a primitive, rejected rounds included), so tests can check that bad input draws
nothing and that strict-time samplers draw a data-independent number of times.
"""

from __future__ import annotations

import os
import weakref
from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadParameter

#: The largest d for which :meth:`RandomSource.uniform_array` works on machine integers.
MAX_ARRAY_RANGE = 1 << 63


class RandomSource(ABC):
    """Uniform random integers, exact, from a stream of random bytes."""

    def __init__(self) -> None:
        self.draws = 0

    @abstractmethod
    def random_bytes(self, count: int) -> bytes:
        """Return *count* uniformly random bytes."""

    def bits(self, k: int) -> int:
        """A uniform integer in [0, 2^k) (strict time: one draw)."""
        if k < 0:
            raise BadParameter(f"bits(k) needs k ≥ 0, got {k}")
        self.draws += 1
        if k == 0:
            return 0
        raw = int.from_bytes(self.random_bytes((k + 7) // 8), "little")
        return raw >> (8 * ((k + 7) // 8) - k)

    def uniform(self, d: int) -> int:
        """An exact uniform integer in [1, d] (Balcer–Vadhan's U(d)), for any integer d ≥ 1.

        Rejection sampling from ⌈log₂ d⌉ bits: expected time, fewer than two rounds on average;
        exactly one round when d is a power of two.
        """
        d = int(d)
        if d < 1:
            raise BadParameter(f"uniform(d) needs d ≥ 1, got {d}")
        k = (d - 1).bit_length()
        while True:
            u = self.bits(k)
            if u < d:
                return u + 1

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        """*size* independent uniform integers in [0, 2^k), k ≤ 64 (strict time: *size* draws)."""
        if not 0 <= k <= 64:
            raise BadParameter(f"bits_array(k, size) needs 0 ≤ k ≤ 64, got k={k}")
        if size < 0:
            raise BadParameter(f"bits_array(k, size) needs size ≥ 0, got {size}")
        self.draws += size
        words = np.frombuffer(self.random_bytes(8 * size), dtype="<u8").astype(np.uint64)
        if k == 0:
            return np.zeros(size, dtype=np.uint64)
        return words >> np.uint64(64 - k)

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        """*size* exact uniform integers in [1, d], 1 ≤ d ≤ 2^63 (expected time: rejection)."""
        d = int(d)
        if not 1 <= d <= MAX_ARRAY_RANGE:
            raise BadParameter(f"uniform_array(d, size) needs 1 ≤ d ≤ 2^63, got d={d}")
        k = (d - 1).bit_length()
        out = self.bits_array(k, size).astype(np.int64)
        bad = np.flatnonzero(out >= d)
        while bad.size:
            out[bad] = self.bits_array(k, bad.size).astype(np.int64)
            bad = bad[out[bad] >= d]
        return out + 1


class SystemSource(RandomSource):
    """The operating system's CSPRNG (``os.urandom``): the default source of every mechanism.

    With ``prefetch`` > 0, bytes are read that many at a time and served in order, which saves a
    system call per draw for callers that draw element by element (PipelineDP's per-partition
    filters). Pending bytes are never pickled and a forked child drops its parent's, so no two
    copies of a source ever serve the same bytes.
    """

    def __init__(self, prefetch: int = 0) -> None:
        super().__init__()
        self.prefetch = prefetch
        self._forget()
        if prefetch:
            _PREFETCHING.add(self)

    def _forget(self) -> None:
        self._buffer, self._position = b"", 0

    def random_bytes(self, count: int) -> bytes:
        if not self.prefetch:
            return os.urandom(count)
        if self._position + count > len(self._buffer):
            self._buffer, self._position = os.urandom(max(count, self.prefetch)), 0
        start = self._position
        self._position += count
        return self._buffer[start : self._position]

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_buffer": b"", "_position": 0}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if self.prefetch:
            _PREFETCHING.add(self)


_PREFETCHING: weakref.WeakSet[SystemSource] = weakref.WeakSet()


def _forget_prefetched() -> None:
    for source in list(_PREFETCHING):
        source._forget()


os.register_at_fork(after_in_child=_forget_prefetched)


class SeededSource(RandomSource):
    """A reproducible source for tests and reports (PCG64 from numpy). Not for real releases."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise BadParameter(
                f"SeededSource(seed) needs a non-negative integer seed, got {seed!r}"
            )
        self.seed = int(seed)
        self._generator = np.random.Generator(np.random.PCG64(self.seed))

    def random_bytes(self, count: int) -> bytes:
        return self._generator.bytes(count)

    def __repr__(self) -> str:
        return f"SeededSource({self.seed})"


def default_source(source: RandomSource | None) -> RandomSource:
    """The source to draw from: *source* if given, else a fresh :class:`SystemSource`."""
    if source is None:
        return SystemSource()
    if not isinstance(source, RandomSource):
        raise BadParameter(
            f"source must be a dpplug RandomSource (SystemSource() or SeededSource(seed)), "
            f"got {type(source).__name__}"
        )
    return source
