"""Sources of randomness: the U(d) oracle of Balcer & Vadhan (full version §2.1) and its bulk
counterpart.

Every mechanism draws through a :class:`RandomSource`. Two primitives exist:

- :meth:`RandomSource.bits` / :meth:`RandomSource.bits_array` return uniform k-bit integers.
  They use a **fixed number of draws** (strict running time).
- :meth:`RandomSource.uniform` / :meth:`RandomSource.uniform_array` return exact uniform integers
  in [1, d] for any d ≥ 1 (big integers too), by rejection from ⌈log₂ d⌉ bits. The result is
  exact but the running time is bounded only **in expectation** (fewer than 2 rounds on average),
  unless d is a power of two, where one round always suffices.

:class:`SystemSource` is the default everywhere: a cryptographically secure generator seeded by
the operating system. :class:`SeededSource` is reproducible and exists for tests and reports; it
is never chosen silently.

**The default generator.** Reading the OS CSPRNG for every draw costs a system call (about 20 ns
per 8 bytes even in bulk), more than everything else a partition selector does per partition.
:class:`SystemSource` therefore runs the construction the operating systems themselves use
(Linux's ``getrandom`` and OpenBSD's ``arc4random`` are ChaCha20 keystreams with key erasure):

- a 256-bit key K₀ is read from ``os.urandom``;
- each refill i runs ChaCha20 (RFC 8439, through the ``cryptography`` package, i.e. OpenSSL)
  under K_i for 32 + R bytes; its first 32 bytes, XOR 32 fresh bytes of ``os.urandom``, become
  K_{i+1}, and the R bytes after them are served in order (:func:`keystream`);
- K_i is dropped as soon as K_{i+1} exists (fast key erasure, Bernstein 2017), and each served
  byte is overwritten in the buffer as it is handed out.

Draws of at most 64 bits (:meth:`SystemSource.bits`, the one draw per partition of a selector's
decider) are served from a pool of 64-bit words instead: each refill of the pool is a keystream of
its own in the same chain (under K_i, for ``prefetch`` bytes, the next key mixed as above), read
as little-endian words into a list and then overwritten with zeros; a draw pops the next word,
so it costs one list operation instead of a lock, a slice and a copy (about a tenth of the time).
A served word is no longer held by the source, as a served byte is erased from the buffer.

Why it is as strong as the OS generator: every keystream is used under one key, once, and that key
is uniform and independent of everything served before it (it includes fresh OS entropy), so by
the pseudorandomness of ChaCha20 (the assumption the kernel's own generator rests on) the output
is indistinguishable from OS bytes. Key erasure means a later copy of the process memory reveals
nothing about bytes already served, and fresh entropy at every refill means a copy reveals at
most the pending rest of one refill. A process never shares a stream: a forked child reseeds
every live source (``os.register_at_fork``) before it runs, and a pickled or copied source starts
from a new OS key. Bulk requests (more than half a refill) get a keystream of their own.

Every source counts the primitive draws it has served in :attr:`RandomSource.draws` (one per
integer returned by a primitive, rejected rounds included), so tests can check that bad input draws
nothing and that strict-time samplers draw a data-independent number of times.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from dpplug.errors import BadParameter

if TYPE_CHECKING:  # the draws of programs sample from sources
    from dpplug.program import Draw

#: The largest d for which :meth:`RandomSource.uniform_array` works on machine integers.
MAX_ARRAY_RANGE = 1 << 63


class RandomSource(ABC):
    """Uniform random integers, exact, from a stream of random bytes."""

    def __init__(self) -> None:
        self.draws = 0

    @abstractmethod
    def random_bytes(self, count: int) -> bytes:
        """Return *count* uniformly random bytes."""

    def serve(self, draw: Draw) -> Any:
        """An outcome of *draw* (a request of :mod:`dpplug.program`: noisy counts from a
        sampler, a uniform integer, an outcome of an exact law, …), sampled from this source.

        Mechanisms whose randomness all goes through served draws (programs run by
        :func:`dpplug.program.run`, noise asked by :func:`dpplug.program.noise`) declare
        :class:`~dpplug.structures.ServedDraws`: the exact law of any of their calls is then
        computed by serving every draw from an enumeration of its law instead
        (:func:`dpplug.program.served_law`), running the code that releases."""
        return draw.sample(self)

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

    def uniforms(self, d: int, size: int) -> list[int]:
        """*size* independent exact uniform integers in [1, d], for any integer d ≥ 1: the same
        draws, in the same order, as *size* calls of :meth:`uniform` (which sources with their
        own :meth:`uniform` keep); :class:`SystemSource` serves them in bulk."""
        return [self.uniform(d) for _ in range(size)]

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        """*size* independent uniform integers in [0, 2^k), k ≤ 64 (strict time: *size* draws)."""
        if not 0 <= k <= 64:
            raise BadParameter(f"bits_array(k, size) needs 0 ≤ k ≤ 64, got k={k}")
        if size < 0:
            raise BadParameter(f"bits_array(k, size) needs size ≥ 0, got {size}")
        self.draws += size
        if k == 0:
            return np.zeros(size, dtype=np.uint64)
        words = np.frombuffer(self.random_bytes(8 * size), dtype=np.dtype("<u8"))
        shifted: npt.NDArray[np.uint64] = (words >> np.uint64(64 - k)).astype(np.uint64, copy=False)
        return shifted

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
    """The default source: a ChaCha20 keystream keyed from the operating system's CSPRNG, with
    fast key erasure and fresh OS entropy at every refill (see the module docstring).

    ``prefetch`` is how many bytes of keystream one refill makes (256 to 64 KiB, the default);
    requests larger than half of it are served by a keystream of their own. A source is safe to
    share between threads. It is never shared between processes: a forked child reseeds every live
    source from its own OS entropy before it runs, and pickling (or copying) a source carries
    neither its key nor its pending bytes, so the copy starts from a fresh key.
    """

    def __init__(self, prefetch: int = 1 << 16) -> None:
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 256:
            raise BadParameter(f"SystemSource(prefetch) needs an int ≥ 256, got {prefetch!r}")
        if prefetch > 1 << 16:
            raise BadParameter(f"SystemSource(prefetch) needs an int ≤ 65536, got {prefetch!r}")
        self.prefetch = prefetch
        self._start()
        super().__init__()

    def _start(self, drawn: int = 0) -> None:
        """A fresh key from the OS and nothing pending (new sources, copies, forked children),
        with *drawn* draws counted so far."""
        self._lock = threading.Lock()
        self._key = os.urandom(KEY_BYTES)
        self._buffer = memoryview(bytearray())
        self._position = 0
        self._words: list[int] = []  # pending 64-bit words, the next one last
        self._refilled = 0  # words in the refills of the word pool so far
        self._counted = drawn  # draws served otherwise, and before the pool started
        _LIVE.add(self)

    @property
    def draws(self) -> int:
        """Primitive draws served (words popped from the pool are counted as they are served)."""
        return self._counted + self._refilled - len(self._words)

    @draws.setter
    def draws(self, value: int) -> None:
        self._counted = value - (self._refilled - len(self._words))

    def bits(self, k: int) -> int:
        """A uniform integer in [0, 2^k): for 0 < k ≤ 64 the top k bits of the next word of the
        pool (see the module docstring), otherwise as every source does."""
        if k.__class__ is int and 0 < k <= 64:
            try:
                word = self._words.pop()
            except IndexError:
                word = self._refill_words()
            return word >> (64 - k)
        return super().bits(k)

    def uniforms(self, d: int, size: int) -> list[int]:
        """:meth:`RandomSource.uniforms` from one request of bytes per round of rejection
        sampling: each value is the top ⌈log₂ d⌉ bits of its own ⌈log₂ d/8⌉ bytes, kept when
        below d (as :meth:`uniform` does, one draw per attempt), the rejected ones drawn
        again."""
        d = int(d)
        if d < 1:
            raise BadParameter(f"uniforms(d, size) needs d ≥ 1, got {d}")
        k = (d - 1).bit_length()
        if k <= 64 or size <= 1:  # the pool serves these as fast
            return super().uniforms(d, size)
        width, shift = (k + 7) // 8, 8 * ((k + 7) // 8) - k
        found: list[int] = []
        while len(found) < size:
            missing = size - len(found)
            block = self.random_bytes(width * missing)
            self.draws += missing
            for start in range(0, width * missing, width):
                value = int.from_bytes(block[start : start + width], "little") >> shift
                if value < d:
                    found.append(value + 1)
        return found

    def _refill_words(self) -> int:
        """A new pool of words, a keystream of its own in the key chain, and its first word
        (another thread may have refilled it meanwhile: then its next word)."""
        with self._lock:
            if not self._words:
                self._key, block = keystream(self._key, os.urandom(KEY_BYTES), self.prefetch)
                array = np.frombuffer(block, dtype=np.dtype("<u8"))
                words: list[int] = array.tolist()
                array[:] = 0  # the pool holds them now; the keystream is erased
                words.reverse()
                self._refilled += len(words)
                self._words = words
            return self._words.pop()

    def random_bytes(self, count: int) -> bytes:
        with self._lock:
            if 2 * count > self.prefetch:
                self._key, out = keystream(self._key, os.urandom(KEY_BYTES), count)
                return bytes(out)
            if self._position + count > len(self._buffer):
                self._key, self._buffer = keystream(self._key, os.urandom(KEY_BYTES), self.prefetch)
                self._position = 0
            start, end = self._position, self._position + count
            self._position = end
            served = bytes(self._buffer[start:end])
            self._buffer[start:end] = _ZEROS[:count]  # served bytes are erased from memory
            return served

    def __getstate__(self) -> dict[str, object]:
        return {"draws": self.draws, "prefetch": self.prefetch}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.prefetch = cast(int, state["prefetch"])
        self._start(cast(int, state["draws"]))


#: Bytes of a ChaCha20 key (and of the OS entropy mixed into each new key).
KEY_BYTES = 32
_NONCE = bytes(16)  # ChaCha20's block counter and nonce: every key is used for one keystream only
_LIVE: weakref.WeakSet[SystemSource] = weakref.WeakSet()
_ZEROS = memoryview(bytes(1 << 15))  # what served bytes are overwritten with


def keystream(key: bytes, fresh: bytes, count: int) -> tuple[bytes, memoryview]:
    """One refill of :class:`SystemSource`: ChaCha20 (RFC 8439, block counter and nonce 0) under
    *key* for 32 + *count* bytes. The next key is the first 32 bytes XOR *fresh* (new OS entropy),
    the output the *count* bytes after them (a writable view, so served bytes can be erased).
    *key* is never used again (fast key erasure)."""
    block = bytearray(KEY_BYTES + count)
    Cipher(algorithms.ChaCha20(key, _NONCE), mode=None).encryptor().update_into(block, block)
    mixed = int.from_bytes(block[:KEY_BYTES], "little") ^ int.from_bytes(fresh, "little")
    block[:KEY_BYTES] = bytes(KEY_BYTES)
    return mixed.to_bytes(KEY_BYTES, "little"), memoryview(block)[KEY_BYTES:]


def _reseed_after_fork() -> None:
    for source in list(_LIVE):
        source._start(source.draws)


os.register_at_fork(after_in_child=_reseed_after_fork)


class SeededSource(RandomSource):
    """A reproducible source for tests and reports (PCG64 from numpy). Not for real releases.

    It serves exactly the bytes of numpy's ``Generator.bytes`` called with the same counts: a
    request for k bytes takes the next max(1, ⌈k/4⌉) 32-bit words of the generator (little-endian)
    and keeps the first k bytes. The words are drawn :data:`_POOL_WORDS` at a time and served from
    a pool, since one numpy call per request costs more than a sampler's whole draw."""

    #: 32-bit words drawn from the generator at once (more when a request needs more).
    _POOL_WORDS = 1 << 10

    def __init__(self, seed: int) -> None:
        super().__init__()
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise BadParameter(
                f"SeededSource(seed) needs a non-negative integer seed, got {seed!r}"
            )
        self.seed = int(seed)
        self._generator = np.random.Generator(np.random.PCG64(self.seed))
        self._pool, self._word = b"", 0  # drawn words (as bytes) and the next one to serve

    def random_bytes(self, count: int) -> bytes:
        words = max(1, (count + 3) // 4)
        if 4 * (self._word + words) > len(self._pool):
            fresh = self._generator.integers(
                0, 1 << 32, size=max(words, self._POOL_WORDS), dtype=np.uint32
            )
            self._pool = self._pool[4 * self._word :] + fresh.astype("<u4").tobytes()
            self._word = 0
        start = 4 * self._word
        self._word += words
        return self._pool[start : start + count]

    def __repr__(self) -> str:
        return f"SeededSource({self.seed})"


@functools.cache
def process_source() -> SystemSource:
    """The process's default source: one :class:`SystemSource` that every call given no source
    draws from (thread-safe; a forked child reseeds it before it runs), so a call pays neither
    an OS read nor a refill of its own."""
    return SystemSource()


def default_source(source: RandomSource | None) -> RandomSource:
    """The source to draw from: *source* if given, else the process's :func:`process_source`."""
    if source is None:
        return process_source()
    if not isinstance(source, RandomSource):
        raise BadParameter(
            f"source must be a dpplug RandomSource (SystemSource() or SeededSource(seed)), "
            f"got {type(source).__name__}"
        )
    return source
