"""The exact law of a lazily revealed uniform b-bit draw (:class:`dpplug.program.Bits`), computed
by splitting [0, 2^b) where the decision's comparisons flip, never by enumerating 2^b values
(docs/conformance.md#exact-laws-of-programs).

- It equals brute-force enumeration of every u on small b, for threshold decisions and for the
  certified order statistics of the pure sparse histogram (Balcer & Vadhan, full version
  Alg. 6.20) run as whole programs.
- A broken decision (an off-by-one comparison) gets a law that differs, by exactly the mass the
  brute force says.
- A decision that uses the drawn value other than through monotone operations and comparisons
  gets NotSupported, as does one needing more pieces than the limit.
- On a 200-bit draw, the law is exact and has as many pieces as the decision has outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from gmpy2 import mpq

from dpplug import program
from dpplug.errors import NotSupported
from dpplug.plugins.histograms.order_statistics import approximate_order_statistics
from dpplug.program import Bits, Prefix, Program


def concrete(u: int, bits: int) -> Prefix:
    """The prefix of the single value u (b ≤ 64: one chunk)."""

    def draw(count: int) -> int:
        assert count == bits
        return u

    return Prefix(bits, draw)


def brute_force(program_: Callable[[], Program[Any]]) -> dict[Any, Any]:
    """The program's law with every Bits draw enumerated over all its 2^b values."""
    result: dict[Any, Any] = {}

    def explore(prefix: list[Any], probability: Any) -> None:
        generator = program_()
        try:
            draw = next(generator)
            for outcome in prefix:
                draw = generator.send(outcome)
        except StopIteration as stop:
            result[stop.value] = result.get(stop.value, mpq(0)) + probability
            return
        if isinstance(draw, Bits):
            law: dict[Any, Any] = {}
            for u in range(1 << draw.bits):
                outcome = draw.decide(concrete(u, draw.bits))
                law[outcome] = law.get(outcome, mpq(0)) + mpq(1, 1 << draw.bits)
        else:
            law = dict(draw.law())
        for outcome, p in law.items():
            explore([*prefix, outcome], probability * p)

    explore([], mpq(1))
    return result


def one_draw(bits: int, decide: Callable[[Prefix], Any]) -> Callable[[], Program[Any]]:
    def single() -> Program[Any]:
        return (yield Bits(bits, decide))

    return single


def bucket(thresholds: list[int], precision: int, u: Prefix) -> int:
    """How many of the thresholds t/2^precision the cell [u, u+1)/2^b lies wholly above."""
    seen = min(precision, u.bits)
    cell = u.top(seen)
    return sum(1 for t in thresholds if cell << precision >= t << seen)


def coarse_then_fine(u: Prefix) -> tuple[int, int]:
    """Reads 3 bits, then all of them only in the upper half, with shifted arithmetic."""
    head = u.top(3)
    if head >= 4:
        return 1, int(u.top(u.bits) * 3 + 1 > 100)
    return 0, int((u.top(u.bits) >> 2) // 3 < 2)


DECISIONS: dict[str, tuple[int, Callable[[Prefix], Any]]] = {
    "one threshold": (10, lambda u: u.top(10) < 613),
    "a threshold on 4 of 12 bits": (12, lambda u: u.top(4) <= 5),
    "buckets at a finer precision": (9, partial(bucket, [3, 700, 701, 2047], 11)),
    "buckets at a coarser precision": (12, partial(bucket, [1, 2, 5], 3)),
    "nested reads": (11, coarse_then_fine),
}


@pytest.mark.parametrize(("bits", "decide"), DECISIONS.values(), ids=DECISIONS.keys())
def test_the_split_law_equals_brute_force(bits: int, decide: Callable[[Prefix], Any]) -> None:
    single = one_draw(bits, decide)
    assert program.law(single) == brute_force(single)


def cdf_table(values: list[int]) -> Callable[[int], int]:
    return lambda v: 0 if v < 0 else values[v]


ORDER_STATISTICS = {
    "fair bits, 5 draws": (cdf_table([1, 2]), 1, 5, 3, 8),
    "three values, ties likely": (cdf_table([5, 6, 16]), 2, 4, 3, 10),
    "skewed, 12 bits": (cdf_table([1, 3, 7, 8]), 3, 3, 2, 12),
}


@pytest.mark.parametrize(
    ("cdf", "top", "m", "k", "bits"), ORDER_STATISTICS.values(), ids=ORDER_STATISTICS.keys()
)
def test_certified_order_statistics_split_law_equals_brute_force(
    cdf: Callable[[int], int], top: int, m: int, k: int, bits: int
) -> None:
    """The real certified comparisons (step 1's binary search, step 2's tie counts)."""
    run = partial(approximate_order_statistics, cdf, top, m, k, bits)
    assert program.law(run) == brute_force(run)


def test_an_off_by_one_comparison_changes_the_law() -> None:
    right = program.law(one_draw(10, lambda u: u.top(10) < 613))
    wrong = program.law(one_draw(10, lambda u: u.top(10) <= 613))
    assert right[True] == mpq(613, 1024) and wrong[True] == mpq(614, 1024)
    # a threshold one cell (4 units at precision 11 on 9 bits) too high
    broken = one_draw(9, partial(bucket, [3, 704, 701, 2047], 11))
    assert program.law(broken) == brute_force(broken)
    assert program.law(broken) != program.law(one_draw(9, partial(bucket, [3, 700, 701, 2047], 11)))


MISUSES: dict[str, Callable[[Prefix], Any]] = {
    "int()": lambda u: int(u.top(5)),
    "==": lambda u: u.top(5) == 3,
    "truth value": lambda u: bool(u.top(5) + 1),
    "indexing": lambda u: list(range(32))[u.top(5)],
    "an unsupported operation": lambda u: u.top(5) & 1,
    "a negative factor": lambda u: u.top(5) * -1 < 0,
    "two drawn values compared": lambda u: u.top(3) < u.top(5),
    "returning it": lambda u: u.top(5),
    "returning it in a tuple": lambda u: (1, u.top(5)),
}


@pytest.mark.parametrize("decide", MISUSES.values(), ids=MISUSES.keys())
def test_a_decision_misusing_the_value_is_not_supported(decide: Callable[[Prefix], Any]) -> None:
    with pytest.raises(NotSupported, match="5-bit draw"):
        program.law(one_draw(5, decide))


def test_more_pieces_than_the_limit_is_not_supported() -> None:
    def value(u: Prefix) -> int:  # the 4-bit value itself, by comparisons: 16 pieces
        return sum(1 for t in range(1, 16) if u.top(4) >= t)

    assert len(program.pieces(4, value, limit=16)) == 16
    with pytest.raises(NotSupported, match="more than 15 pieces"):
        program.pieces(4, value, limit=15)


def test_a_200_bit_draw_has_an_exact_law_in_few_pieces() -> None:
    threshold = 3**120  # about 2^190
    decide = partial(bucket, [threshold, threshold + 1], 200)
    assert len(program.pieces(200, decide)) == 3
    assert program.law(one_draw(200, decide)) == {
        0: mpq(threshold, 1 << 200),
        1: mpq(1, 1 << 200),
        2: 1 - mpq(threshold + 1, 1 << 200),
    }


def _two_draws() -> Program[int]:
    first = yield program.Uniform(6)
    second = yield program.Uniform(first)
    return 10 * first + second


def test_recording_gives_the_draws_run_answers_in_order() -> None:
    from dpplug.randomness import SeededSource

    with program.recording() as transcript:
        output = program.run(_two_draws, SeededSource(3))
    assert [type(draw) for draw, _ in transcript] == [program.Uniform, program.Uniform]
    first, second = (outcome for _, outcome in transcript)
    assert transcript[1][0].k == first
    assert output == 10 * first + second
    program.run(_two_draws, SeededSource(4))  # outside the block: nothing recorded
    assert len(transcript) == 2
