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
    *sums* w_i·y_i and positive *weights* w_i (so integer data stays integer)."""
    block_sums: list[Rat] = []
    block_weights: list[Rat] = []
    lengths: list[int] = []
    for s, w in zip(sums, weights, strict=True):
        if not w > 0:
            raise ValueError(f"PAVA weights must be positive, got {w}")
        block_sums.append(s)
        block_weights.append(w)
        lengths.append(1)
        # Merge while the previous block's mean is below the last one's: s₁/w₁ < s₂/w₂.
        while (
            len(lengths) > 1
            and block_sums[-2] * block_weights[-1] < block_sums[-1] * block_weights[-2]
        ):
            s2, w2, l2 = block_sums.pop(), block_weights.pop(), lengths.pop()
            block_sums[-1] += s2
            block_weights[-1] += w2
            lengths[-1] += l2
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


def round_non_negative(value: Rat) -> int:
    """round(max(value, 0)) for an exact rational, halves rounded up (away from zero): the
    rounding of L1(b) and H6. Applied to a non-increasing sequence it stays non-increasing."""
    q = mpq(value)
    if q <= 0:
        return 0
    return int((2 * q.numerator + q.denominator) // (2 * q.denominator))
