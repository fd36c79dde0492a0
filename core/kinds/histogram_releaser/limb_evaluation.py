"""One polynomial over F_P at one point, as two exact floating-point products of short limbs
(CompactHistogram's ``count``; docs/mechanisms.md#compact-histogram).

**Rectangular splitting** (Brent & Zimmermann, *Modern Computer Arithmetic*, §4.4.3). With the
n + 1 coefficients as R rows of B (B = ⌈√(n+1)⌉, zero-padded), the powers y = (1, x, …, x^{B−1})
and z = (1, x^B, …, x^{B(R−1)}) mod P, p(x) = zᵀ·C·y mod P: two products of integers below P,
with only the B + R powers computed mod P.

**Limbs.** Every integer below P is cut into limbs of w bits: a coefficient into L_c limbs of
α·w bits, a power of x into L_y limbs of w bits. Each limb of C·y, Σ_i C_ji·y_i, is below
max(B, R)·2^{(α+1)w}, so below 2^53 as long as (α+1)·w + bit length of max(B, R) ≤ 53: exact in
IEEE double precision in any order of summation (every partial sum is an integer below the total),
and one BLAS product of the stored limbs of C (built once, contiguous) with the limbs of y gives
them all. The limbs of C·y lie on a grid of w bits (limb a of C times limb b of y sits at
α·a + b); summed per grid position in 64-bit integers and cut into w-bit digits, they are again
short enough for the same bound against the α·w-bit limbs of z, and the second product's entries,
shifted to their grid positions, add up to zᵀ·C·y exactly; one reduction mod P remains.

(α, w) minimises L_c·(L_y + :data:`READ_COST`): the first product reads the L_c·(n+1) stored limbs
once and does L_c·L_y multiply-adds per coefficient. Below :data:`HORNER_BELOW` coefficients the
fixed cost of the products (about twenty numpy calls) exceeds Horner's rule in Python integers,
which is used there instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from math import isqrt
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

#: Fewer coefficients are evaluated by Horner's rule (the two cost the same at about 500, measured
#: with a 86-bit P).
HORNER_BELOW = 512
#: Integers below 2^53 are exact in IEEE double precision.
SIGNIFICAND_BITS = 53
#: Reading one stored limb costs about as much as this many multiply-adds (measured at n = 10^5
#: with a 93-bit P: 3 × 9 limbs, cost 39, beat 5 × 5 (45), 4 × 7 (44) and 3 × 12 (48)).
READ_COST = 4
#: Each BLAS product does at most this many multiply-adds: OpenBLAS keeps products this small in
#: the calling thread, where its threads would cost far more than they save on a shared machine.
BLOCK_MULTIPLY_ADDS = 1 << 17
#: Sums of limb products per grid position are 64-bit integers: at most this many terms of
#: 2^53 each.
MAX_TERMS = 1 << (63 - SIGNIFICAND_BITS)

Floats = npt.NDArray[np.float64]
LITTLE: Literal["little"] = "little"


class LimbCutter:
    """Integers below 2^{count·width} cut into *count* limbs of *width* ≤ 53 bits (so exact as
    floats), lowest first, as a float64 matrix with a row per integer."""

    def __init__(self, width: int, count: int) -> None:
        starts = np.arange(count, dtype=np.uint64) * np.uint64(width)
        self._words = int(starts[-1]) // 64 + 2  # the limb's word and the next one exist
        self._word = (starts // np.uint64(64)).astype(np.intp)
        self._shift = starts % np.uint64(64)
        self._back = np.uint64(63) - self._shift
        self._mask = np.uint64((1 << width) - 1)

    def __call__(self, values: Sequence[int]) -> Floats:
        size = 8 * self._words
        raw = b"".join(map(int.to_bytes, values, repeat(size), repeat(LITTLE)))
        words = np.frombuffer(raw, dtype="<u8").reshape(len(values), self._words)
        low = words[:, self._word] >> self._shift
        high = (words[:, self._word + 1] << np.uint64(1)) << self._back
        limbs: Floats = ((low | high) & self._mask).astype(np.float64)
        return limbs


def limb_plan(bits: int, span: int) -> tuple[int, int]:
    """(α, w) for integers of *bits* bits in sums of at most *span* products (module docstring)."""
    budget = SIGNIFICAND_BITS - span.bit_length()

    def cost(alpha: int) -> int:
        width = budget // (alpha + 1)
        coefficient_limbs = -(-bits // (alpha * width))
        return coefficient_limbs * (-(-bits // width) + READ_COST)

    alpha = min(range(1, budget // 2 + 1), key=cost)
    return alpha, budget // (alpha + 1)


class LimbEvaluator:
    """p(x) mod P for the polynomial with *coefficients* (lowest degree first), any x ≥ 0: by
    limb products (module docstring), or Horner's rule below :data:`HORNER_BELOW` coefficients."""

    def __init__(self, coefficients: Sequence[int], modulus: int) -> None:
        self.modulus = modulus
        self._horner = tuple(reversed(coefficients)) if len(coefficients) < HORNER_BELOW else None
        if self._horner is not None:
            return
        self.columns = columns = isqrt(len(coefficients) - 1) + 1  # B
        self.rows = rows = -(-len(coefficients) // columns)  # R
        bits = modulus.bit_length()
        alpha, width = limb_plan(bits, max(rows, columns))
        self._width = width
        self._cut_power = LimbCutter(width, -(-bits // width))
        self._coefficient_limbs = count = -(-bits // (alpha * width))  # L_c
        self._cut_coefficient = LimbCutter(alpha * width, count)
        power_limbs = -(-bits // width)  # L_y
        digits = -(-63 // width)
        if count * digits > MAX_TERMS:
            raise ValueError(f"a {bits}-bit modulus needs too many limbs: at most {MAX_TERMS}")
        # Limb a of row j is row a·R + j of a (L_c·R) × B matrix, stored transposed in blocks of
        # `block` rows, one BLAS product each.
        padded = [*coefficients, *[0] * (rows * columns - len(coefficients))]
        limbs = self._cut_coefficient(padded).reshape(rows, columns, count)
        stacked = limbs.transpose(2, 0, 1).reshape(count * rows, columns)
        block = min(len(stacked), max(1, BLOCK_MULTIPLY_ADDS // (columns * power_limbs)))
        blocks = -(-len(stacked) // block)
        stacked = np.concatenate([stacked, np.zeros((blocks * block - len(stacked), columns))])
        self._blocks = np.ascontiguousarray(
            stacked.reshape(blocks, block, columns).transpose(0, 2, 1)
        )
        # Grid positions (in w bits): limb a of C times limb b of y at α·a + b, summed into
        # `positions` 64-bit integers, each cut into `digits` digits of w bits.
        self._alpha, self._power_limbs = alpha, power_limbs
        self._positions = positions = alpha * (count - 1) + power_limbs
        self._digit_shifts = np.arange(digits, dtype=np.int64)[:, None] * width
        grid = (
            np.arange(positions)[:, None, None]
            + np.arange(digits)[None, :, None]
            + alpha * np.arange(count)[None, None, :]
        )
        self._grid = grid.ravel()
        self._shifts = range(0, width * (int(self._grid.max()) + 1), width)

    def __call__(self, x: int) -> int:
        modulus = self.modulus
        x %= modulus
        if self._horner is not None:
            value = 0
            for c in self._horner:
                value = (value * x + c) % modulus
            return value
        rows, columns = self.rows, self.columns
        ys = [1] * columns
        for i in range(1, columns):
            ys[i] = ys[i - 1] * x % modulus
        step = ys[-1] * x % modulus
        zs = [1] * rows
        for j in range(1, rows):
            zs[j] = zs[j - 1] * step % modulus
        count, alpha, power_limbs = self._coefficient_limbs, self._alpha, self._power_limbs
        # First product: limb b of (limb a of C)·y for every row j, exact below 2^53.
        products: Any = np.matmul(np.ascontiguousarray(self._cut_power(ys).T), self._blocks)
        products = products.transpose(1, 0, 2).reshape(power_limbs, -1)[:, : count * rows]
        products = products.reshape(power_limbs, count, rows).astype(np.int64)
        sums = np.zeros((self._positions, rows), dtype=np.int64)
        for a in range(count):
            sums[alpha * a : alpha * a + power_limbs] += products[:, a, :]
        mask = (1 << self._width) - 1
        digits = (sums[:, None, :] >> self._digit_shifts) & mask
        # Second product: against the α·w-bit limbs of z, exact below 2^53 too.
        second = digits.reshape(-1, rows).astype(np.float64) @ self._cut_coefficient(zs)
        # Per grid position: at most L_c·digits terms below 2^53 each, so 64-bit sums.
        by_position = np.zeros(len(self._shifts), dtype=np.int64)
        np.add.at(by_position, self._grid, second.astype(np.int64).ravel())
        return sum(map(int.__lshift__, by_position.tolist(), self._shifts)) % modulus
