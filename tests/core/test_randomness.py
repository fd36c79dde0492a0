"""Random sources: exact uniform integers, draw counting, seeded reproducibility, and the
default source's keystream construction (known answers, fork, copies, threads)."""

from __future__ import annotations

import copy as copy_module
import os
import pickle
import threading
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import dpplug
from dpplug import randomness
from dpplug.randomness import default_source, keystream


def test_seeded_sources_are_reproducible_and_distinct() -> None:
    a, b, c = dpplug.SeededSource(7), dpplug.SeededSource(7), dpplug.SeededSource(8)
    draws = [a.uniform(10**30) for _ in range(5)]
    assert draws == [b.uniform(10**30) for _ in range(5)]
    assert draws != [c.uniform(10**30) for _ in range(5)]


def test_seeded_source_serves_numpys_bytes_for_the_same_requests() -> None:
    """Its pool of drawn words changes no byte: the stream is numpy's ``Generator.bytes`` called
    with the same counts (empty requests and requests past the pool included)."""
    counts = [0, 1, 3, 4, 5, 0, 9, 17, 4000, 2, 8192, 7, 0, 33, 100_000, 1, 6]
    source = dpplug.SeededSource(11)
    reference = np.random.Generator(np.random.PCG64(11))
    assert [source.random_bytes(k) for k in counts] == [reference.bytes(k) for k in counts]


def test_uniform_covers_exactly_one_to_d() -> None:
    source = dpplug.SeededSource(1)
    seen = Counter(source.uniform(6) for _ in range(6000))
    assert set(seen) == set(range(1, 7))
    assert source.uniform(1) == 1


def test_uniform_is_uniform_for_big_non_power_of_two_d() -> None:
    """Top decile frequency of U(3·2^200): false alarm 1e-7 (binomial two-sided), fixed seed."""
    d = 3 * 2**200
    source = dpplug.SeededSource(2)
    hits = sum(source.uniform(d) > d - d // 10 for _ in range(20000))
    assert stats.binomtest(hits, 20000, (d // 10) / d).pvalue > 1e-7


def test_power_of_two_uses_exactly_one_draw() -> None:
    source = dpplug.SeededSource(3)
    for _ in range(100):
        source.uniform(2**64)
    assert source.draws == 100


def test_uniform_array_is_exact_and_in_range() -> None:
    source = dpplug.SeededSource(4)
    values = source.uniform_array(5, 50000)
    assert values.dtype == np.int64 and values.min() == 1 and values.max() == 5
    counts = np.bincount(values)[1:]
    assert stats.chisquare(counts).pvalue > 1e-6


def test_bits_array_counts_one_draw_per_value() -> None:
    source = dpplug.SeededSource(5)
    values = source.bits_array(63, 1000)
    assert source.draws == 1000 and int(values.max()) < 2**63


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.uniform(0),
        lambda s: s.bits(-1),
        lambda s: s.bits_array(65, 3),
        lambda s: s.uniform_array(2**63 + 1, 3),
        lambda s: s.bits_array(3, -1),
    ],
)
def test_bad_arguments_raise_before_drawing(call) -> None:  # type: ignore[no-untyped-def]
    source = dpplug.SeededSource(6)
    with pytest.raises(dpplug.BadParameter):
        call(source)
    assert source.draws == 0


def test_the_default_source_is_the_os_csprng() -> None:
    """The process's one SystemSource, shared by every call given no source."""
    assert isinstance(default_source(None), dpplug.SystemSource)
    assert default_source(None) is default_source(None) is randomness.process_source()
    with pytest.raises(dpplug.BadParameter, match="RandomSource"):
        default_source(np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(dpplug.BadParameter):
        dpplug.SeededSource(-1)


# RFC 8439, Appendix A.1, test vector 1: ChaCha20 block 0 for the zero key and zero nonce.
RFC8439_A1_1 = bytes.fromhex(
    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
)


def chacha20(key: bytes, length: int) -> bytes:
    """ChaCha20 keystream (RFC 8439 §2.3–2.4, block counter and nonce 0) in pure Python: an
    independent reference for the OpenSSL one the source uses."""
    mask = 0xFFFFFFFF

    def rotl(x: int, n: int) -> int:
        return ((x << n) | (x >> (32 - n))) & mask

    def quarter(s: list[int], a: int, b: int, c: int, d: int) -> None:
        s[a] = (s[a] + s[b]) & mask
        s[d] = rotl(s[d] ^ s[a], 16)
        s[c] = (s[c] + s[d]) & mask
        s[b] = rotl(s[b] ^ s[c], 12)
        s[a] = (s[a] + s[b]) & mask
        s[d] = rotl(s[d] ^ s[a], 8)
        s[c] = (s[c] + s[d]) & mask
        s[b] = rotl(s[b] ^ s[c], 7)

    words = [int.from_bytes(key[i : i + 4], "little") for i in range(0, 32, 4)]
    out = b""
    for counter in range(-(-length // 64)):
        state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *words, counter, 0, 0, 0]
        work = list(state)
        for _ in range(10):
            for a, b, c, d in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)):
                quarter(work, a, b, c, d)
            for a, b, c, d in ((0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
                quarter(work, a, b, c, d)
        mixed = (((x + y) & mask).to_bytes(4, "little") for x, y in zip(work, state, strict=True))
        out += b"".join(mixed)
    return out[:length]


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def test_reference_chacha20_matches_rfc8439() -> None:
    assert chacha20(bytes(32), 64) == RFC8439_A1_1


@pytest.mark.parametrize("count", [0, 1, 32, 200, 1000])
def test_keystream_known_answers(count: int) -> None:
    """One refill: the next key is keystream[0:32] XOR the fresh OS bytes, the output the
    count bytes after it, for the zero key (RFC 8439 A.1) and a random key."""
    fresh = bytes(range(32))
    next_key, out = keystream(bytes(32), fresh, count)
    assert next_key == xor(RFC8439_A1_1[:32], fresh)
    assert bytes(out) == chacha20(bytes(32), 32 + count)[32:]
    if count >= 32:
        assert bytes(out[:32]) == RFC8439_A1_1[32:]
    key = bytes.fromhex("00112233445566778899aabbccddeeff" * 2)
    next_key, out = keystream(key, bytes(32), count)
    stream = chacha20(key, 32 + count)
    assert next_key == stream[:32] and bytes(out) == stream[32:]


def test_system_source_serves_the_keyed_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the OS bytes scripted, the source serves exactly K₀'s keystream after its first 32
    bytes, then K₁ = those 32 bytes XOR fresh entropy, and so on; bulk requests get a refill of
    their own; draws are counted as for any source."""
    entropy = iter(bytes([i]) * 32 for i in range(1, 100))
    monkeypatch.setattr(randomness.os, "urandom", lambda n: next(entropy)[:n])
    source = dpplug.SystemSource(prefetch=256)
    key = bytes([1]) * 32
    served = b"".join(source.random_bytes(k) for k in (100, 28, 128))  # exactly one refill
    stream = chacha20(key, 32 + 256)
    assert served == stream[32:]
    key = xor(stream[:32], bytes([2]) * 32)
    stream = chacha20(key, 32 + 256)
    assert source.random_bytes(8) == stream[32:40]
    # Draws of at most 64 bits: a pool of words, a refill of its own under K₂, in order.
    key = xor(stream[:32], bytes([3]) * 32)
    pool = chacha20(key, 32 + 256)
    words = [int.from_bytes(pool[i : i + 8], "little") for i in range(32, 32 + 256, 8)]
    assert source.bits(64) == words[0] and source.bits(63) == words[1] >> 1
    assert [source.bits(1) for _ in range(30)] == [w >> 63 for w in words[2:]]
    assert source.draws == 32 and source._words == []
    big = source.random_bytes(1000)  # > prefetch / 2: a keystream of its own, under K₃
    key = xor(pool[:32], bytes([4]) * 32)
    bulk = chacha20(key, 32 + 1000)
    assert big == bulk[32:]
    # The pending bytes of K₁'s refill are served first; the next refill is under K₄.
    assert source.random_bytes(8) + source.random_bytes(128) == stream[40:176]
    assert source.random_bytes(112) == stream[176:]
    key = xor(bulk[:32], bytes([5]) * 32)
    assert source.random_bytes(8) == chacha20(key, 40)[32:]
    # The word pool's next refill is under K₅.
    key = xor(chacha20(key, 32 + 256)[:32], bytes([6]) * 32)
    assert source.bits(64) == int.from_bytes(chacha20(key, 40)[32:], "little")
    assert source.draws == 33


def test_served_bytes_are_erased_from_the_buffer() -> None:
    source = dpplug.SystemSource()
    source.random_bytes(24)
    assert bytes(source._buffer[:24]) == bytes(24)
    assert any(source._buffer[24:64])


def test_served_words_leave_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The word pool's keystream is zeroed once read into the pool, and a served word is no
    longer held by the source."""
    blocks: list[memoryview] = []
    chain = randomness.keystream

    def keep(key: bytes, fresh: bytes, count: int) -> tuple[bytes, memoryview]:
        next_key, block = chain(key, fresh, count)
        blocks.append(block)
        return next_key, block

    monkeypatch.setattr(randomness, "keystream", keep)
    source = dpplug.SystemSource(prefetch=256)
    first = source.bits(64)
    assert bytes(blocks[0]) == bytes(256)
    assert len(source._words) == 31 and first not in source._words


def test_copies_never_repeat_the_stream() -> None:
    """Pickled and copied sources carry neither the key nor pending bytes: they start from a new
    OS key (their bytes would otherwise equal the original's); the draw count is kept."""
    source = dpplug.SystemSource()
    source.bits(63)
    state = source.__getstate__()
    assert set(state) == {"draws", "prefetch"}
    for copy in (
        pickle.loads(pickle.dumps(source)),
        copy_module.copy(source),
        copy_module.deepcopy(source),
    ):
        assert copy.draws == 1 and copy.prefetch == source.prefetch
        assert copy._key != source._key
        assert copy.random_bytes(64) != source.random_bytes(64)


def test_a_forked_child_never_repeats_the_parent() -> None:
    """The child reseeds before it runs: its bytes are not the ones still pending in the
    parent's buffer, nor what the parent serves next."""
    source = dpplug.SystemSource()
    source.random_bytes(8)
    source.bits(64)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        word = source.bits(64).to_bytes(8, "little")
        os.write(write, source.random_bytes(56) + word)
        os._exit(0)
    os.close(write)
    child = b""
    while len(child) < 64:
        chunk = os.read(read, 64 - len(child))
        assert chunk
        child += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    words = [source.bits(64) for _ in range(len(source._words) + 1)]
    parent = source.random_bytes(4096)
    assert child[:8] not in parent and child[:56] != parent[:56]
    assert int.from_bytes(child[56:], "little") not in words


def test_threads_never_share_bytes() -> None:
    """Concurrent draws from one source are all distinct 64-bit values (a race serving the same
    buffer position twice would repeat one)."""
    source = dpplug.SystemSource(prefetch=4096)
    results: list[list[int]] = [[], [], [], []]

    def draw(out: list[int]) -> None:
        for _ in range(5000):
            out.append(source.bits(64))

    threads = [threading.Thread(target=draw, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    values = [v for r in results for v in r]
    assert len(set(values)) == len(values) == 20000
    assert source.draws == 20000


def test_system_source_bytes_look_uniform() -> None:
    """Byte frequencies of 2^20 bytes: χ² test at false-alarm 1e-6 (the OS seeds it, so the test
    is not reproducible, but it fails with probability 1e-6 for a uniform stream); power: a
    stream with one byte value 1% more frequent is rejected."""
    data = np.frombuffer(dpplug.SystemSource().random_bytes(1 << 20), dtype=np.uint8)
    counts = np.bincount(data, minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-6
    biased = counts.copy()
    biased[0] += (1 << 20) // 256 // 4
    assert stats.chisquare(biased).pvalue < 1e-6


def test_system_source_words_look_uniform() -> None:
    """The top and the bottom byte of 2^18 draws of bits(63) (the pool's words): χ² tests at
    false-alarm 5e-7 each, 1e-6 together; power: one byte value twice as frequent (the counts of
    one draw in 256 added to it) is rejected, whatever the OS's draws (its χ² term alone,
    about 1024, is far past the 5e-7 quantile, about 380)."""
    source = dpplug.SystemSource()
    draws = np.array([source.bits(63) for _ in range(1 << 18)], dtype=np.uint64)
    assert int(draws.max()) < 1 << 63 and source.draws == 1 << 18
    for byte in (draws >> np.uint64(55), draws & np.uint64(255)):
        counts = np.bincount(byte.astype(np.int64), minlength=256)
        assert stats.chisquare(counts).pvalue > 5e-7
        biased = counts.copy()
        biased[0] += (1 << 18) // 256
        assert stats.chisquare(biased).pvalue < 5e-7


@pytest.mark.parametrize("prefetch", [0, 255, -1, 1.5, True, 65537])
def test_prefetch_must_be_between_256_and_65536(prefetch: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        dpplug.SystemSource(prefetch=prefetch)  # type: ignore[arg-type]


class _StreamSystemSource(randomness.SystemSource):
    """A SystemSource serving a fixed byte stream in order, however the requests split it."""

    def __init__(self, stream: bytes) -> None:
        super().__init__()
        self.stream, self.position = stream, 0

    def random_bytes(self, count: int) -> bytes:
        start, self.position = self.position, self.position + count
        return self.stream[start : self.position]


@pytest.mark.parametrize("d", [3 * 2**70 + 1, 2**65, 2**200 - 12345, 5, 2**64 + 1])
def test_system_source_uniforms_in_bulk_equal_one_uniform_at_a_time(d: int) -> None:
    """The bulk path reads each value from its own bytes and rejects as uniform() does: on the
    same byte stream it returns the same values, with the same number of draws."""
    stream = np.random.default_rng(7).bytes(1 << 16)
    bulk, single = _StreamSystemSource(stream), _StreamSystemSource(stream)
    values = bulk.uniforms(d, 300)
    k = (d - 1).bit_length()
    expected = []
    for _ in range(300):  # uniform() through bits(k) from random_bytes, as the base class does
        while (u := randomness.RandomSource.bits(single, k)) >= d:
            pass
        expected.append(u + 1)
    if k > 64:
        assert values == expected
        assert bulk.draws == single.draws and bulk.position == single.position
    assert all(1 <= v <= d for v in values) and len(values) == 300
    assert bulk.uniforms(d, 0) == []
