"""Weighted isotonic regression onto non-increasing sequences, exactly: the pool adjacent
violators algorithm (PAVA; Suresh 2019, steps L1 and H5; Hay et al. 2010's consistency step).

Given values y_i and positive weights w_i, the fit x minimises Σ_i w_i·(x_i − y_i)² subject to
x_1 ≥ x_2 ≥ …. PAVA scans left to right, pushes each point as a block and merges the last two
blocks while their means violate the order; each block's fitted value is its weighted mean. The
blocks are kept as exact (Σ w_i·y_i, Σ w_i) pairs and compared by cross-multiplication, so the
fit is an exact rational, independent of the order of floating-point operations: integer
inputs (the noisy counts of both mechanisms) are never turned into floats. Ties (equal adjacent
means) are not merged, and the fit is the same either way.

Two properties the mechanisms' accuracy rests on: the fit is order-preserving and commutes with
adding a constant, so it never moves any point farther than the largest |y_i − x_i| from a
non-increasing x (ℓ∞ non-expansive); and, unweighted, it keeps the sum, so by Crandall–Tartar it
is ℓ₁ non-expansive.
"""

from __future__ import annotations

from collections.abc import Sequence

from gmpy2 import mpq

from dpplug.exact import Rat


def pava_blocks(sums: Sequence[Rat], weights: Sequence[Rat]) -> list[tuple[Rat, Rat, int]]:
    """The fitted blocks (Σ w·y, Σ w, length), left to right, for points given as
    *sums* w_i·y_i and positive *weights* w_i (so integer data stays integer). Each point
    absorbs the blocks before it while their mean is below its block's, s₁/w₁ < s₂/w₂ (the
    usual merge of the last two blocks, done before the push)."""
    if len(sums) != len(weights):
        raise ValueError(f"PAVA needs one weight per point: {len(sums)} and {len(weights)}")
    if weights and not min(weights) > 0:
        raise ValueError(f"PAVA weights must be positive, got {min(weights)}")
    block_sums: list[Rat] = []
    block_weights: list[Rat] = []
    lengths: list[int] = []
    pop_sum, pop_weight, pop_length = block_sums.pop, block_weights.pop, lengths.pop
    for s, w in zip(sums, weights, strict=True):
        length = 1
        while block_sums and block_sums[-1] * w < s * block_weights[-1]:
            s, w, length = s + pop_sum(), w + pop_weight(), length + pop_length()
        block_sums.append(s)
        block_weights.append(w)
        lengths.append(length)
    return list(zip(block_sums, block_weights, lengths, strict=True))


def isotonic_non_increasing(
    values: Sequence[Rat], weights: Sequence[Rat] | None = None
) -> list[Rat]:
    """The exact non-increasing least-squares fit of *values* (weights 1 by default), as
    ``mpq`` values, one per point."""
    w = [1] * len(values) if weights is None else list(weights)
    sums = [wi * yi for wi, yi in zip(w, values, strict=True)]
    fitted: list[Rat] = []
    for s, total, length in pava_blocks(sums, w):
        fitted += [mpq(s) / total] * length
    return fitted


def rounded_runs(blocks: Sequence[tuple[Rat, Rat, int]]) -> list[tuple[int, int]]:
    """(round(max(mean, 0)), length) of each fitted block of :func:`pava_blocks`, left to
    right: the rounded fit as runs of equal values, one rounding per block, on the block's own
    s and w (:func:`rounded_quotient`)."""
    return [(rounded_quotient(s, w), length) for s, w, length in blocks]


def round_non_negative(value: Rat) -> int:
    """round(max(value, 0)) for an exact rational, halves rounded up (away from zero): the
    rounding of L1(b) and H6. Applied to a non-increasing sequence it stays non-increasing."""
    q = mpq(value)
    return rounded_quotient(q.numerator, q.denominator)


def rounded_quotient(s: Rat, w: Rat) -> int:
    """round(max(s/w, 0)) for w > 0, halves rounded up: ⌊s/w + 1/2⌋ = ⌊(2s + w)/(2w)⌋, without
    forming s/w (integer data stays integer)."""
    return int((2 * s + w) // (2 * w)) if s > 0 else 0
