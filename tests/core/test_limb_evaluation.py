"""dpplug.kinds.histogram_releaser.limb_evaluation (docs/mechanisms.md#compact-histogram): one
evaluation of a polynomial over F_P as exact double-precision products of short limbs equals
Horner's rule mod P, for every shape of the coefficient matrix, moduli from 2 to 1000 bits, points
at and beyond P, and coefficients and powers whose limbs are all ones (the sums closest to 2^53)."""

from __future__ import annotations

import random

import pytest

from dpplug.kinds.histogram_releaser.limb_evaluation import (
    HORNER_BELOW,
    SIGNIFICAND_BITS,
    LimbCutter,
    LimbEvaluator,
    limb_plan,
)


def horner(coefficients: list[int], x: int, p: int) -> int:
    value = 0
    for c in reversed(coefficients):
        value = (value * x + c) % p
    return value


def points(p: int, rng: random.Random) -> list[int]:
    edges = [0, 1, 2, p - 1, p, p + 1, 3 * p - 1, (1 << 64) - 1]
    return [*edges, *(rng.randrange(p) for _ in range(5))]


@pytest.mark.parametrize("bits", [2, 31, 61, 89, 93, 128, 300, 1000])
@pytest.mark.parametrize("size", [1, 2, 17, HORNER_BELOW - 1, HORNER_BELOW, 513, 600, 1000, 1025])
def test_evaluation_is_horners_rule_mod_p(bits: int, size: int) -> None:
    """Both paths: Horner's rule below HORNER_BELOW coefficients, and limbs for every matrix shape
    from there (square, a short last row, one more column)."""
    rng = random.Random(bits * 1009 + size)
    p = (1 << (bits - 1)) + rng.randrange(1 << (bits - 1))
    coefficients = [rng.randrange(p) for _ in range(size)]
    evaluate = LimbEvaluator(coefficients, p)
    xs = points(p, rng)
    assert [evaluate(x) for x in xs] == [horner(coefficients, x, p) for x in xs]


@pytest.mark.parametrize("bits", [89, 93, 200])
def test_sums_at_the_exactness_bound_stay_exact(bits: int) -> None:
    """P = 2^bits − 1 (the evaluator does not need a prime), every coefficient P − 1 and x = P − 1:
    every limb of every coefficient is all ones but the lowest, and the powers alternate 1 and
    P − 1, so the first product's sums reach about max(B, R)·2^{(α+1)w}, the bound the plan keeps
    below 2^53."""
    p = (1 << bits) - 1
    size = 20_000
    coefficients = [p - 1] * size
    evaluate = LimbEvaluator(coefficients, p)
    for x in (p - 1, p - 2, 2):
        assert evaluate(x) == horner(coefficients, x, p)


@pytest.mark.parametrize("bits", [2, 64, 93, 1000])
@pytest.mark.parametrize("span", [1, 317, 1025, 1 << 20])
def test_the_plan_keeps_every_sum_below_two_to_the_53(bits: int, span: int) -> None:
    alpha, width = limb_plan(bits, span)
    assert alpha >= 1 and width >= 1
    assert (alpha + 1) * width + span.bit_length() <= SIGNIFICAND_BITS


@pytest.mark.parametrize(("width", "count"), [(1, 5), (11, 9), (33, 3), (52, 2), (53, 3)])
def test_limbs_put_the_integer_back_together(width: int, count: int) -> None:
    rng = random.Random(width)
    bits = width * count
    values = [0, 1, (1 << bits) - 1, *(rng.getrandbits(bits) for _ in range(20))]
    limbs = LimbCutter(width, count)(values)
    assert limbs.shape == (len(values), count)
    rebuilt = [sum(int(limb) << (width * i) for i, limb in enumerate(row)) for row in limbs]
    assert rebuilt == values
    assert all(0 <= limb < 1 << width for row in limbs for limb in row)


def test_a_modulus_too_large_for_64_bit_sums_is_refused() -> None:
    with pytest.raises(ValueError, match="too many limbs"):
        LimbEvaluator([1] * HORNER_BELOW, (1 << 40_000) + 1)
