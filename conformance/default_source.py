"""The source a caller leaves out, seeded: the default-source dimension of the sampling law.

Every other check hands a mechanism a :class:`~dpplug.randomness.SeededSource`, so a plugin
whose code branches on the source it is given (a fast path for the operating system's
:class:`~dpplug.randomness.SystemSource`, randomness derived from the data when it is given no
source) would be certified on the branch callers do not take. :func:`as_default` makes a
:class:`SeededSystemSource`, a ``SystemSource`` whose draws come from a seeded generator, the
source every call given none draws from, so the sampling-law contract can test real draws made
with the source left out, reproducibly.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dpplug import randomness
from dpplug.randomness import SeededSource, SystemSource


class SeededSystemSource(SystemSource):
    """A :class:`SystemSource` (for any code that asks) whose draws come from
    ``SeededSource(seed)``: the same draws, in the same order, as that seeded source."""

    def __init__(self, seed: int) -> None:
        self._inner = SeededSource(seed)
        super().__init__()

    @property
    def draws(self) -> int:
        return self._inner.draws

    @draws.setter
    def draws(self, value: int) -> None:
        self._inner.draws = value

    def bits(self, k: int) -> int:
        return self._inner.bits(k)

    def random_bytes(self, count: int) -> bytes:
        return self._inner.random_bytes(count)

    def uniforms(self, d: int, size: int) -> list[int]:
        return self._inner.uniforms(d, size)

    def __repr__(self) -> str:
        return f"SeededSystemSource({self._inner.seed})"


@contextmanager
def as_default(source: SystemSource) -> Iterator[None]:
    """Inside the block, *source* is the process's default source
    (:func:`dpplug.randomness.process_source`, which every call given no source draws from)."""
    saved = randomness.process_source
    setattr(randomness, "process_source", lambda: source)  # noqa: B010 - a cached function
    try:
        yield
    finally:
        setattr(randomness, "process_source", saved)  # noqa: B010
