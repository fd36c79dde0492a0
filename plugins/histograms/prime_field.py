"""The prime field of CompactHistogram: a proven prime modulus and fast interpolation.

Balcer & Vadhan (full version, Lemma 8.1) use GF(2^{2·3^ℓ}); any finite field F of size P works the
same way (see :mod:`.compact`). Here F = F_P for a prime P, whose arithmetic and polynomial products
come from python-flint (``fmpz_mod_poly``, FLINT's fast multiplication).

**Prime.** :func:`proth_prime_at_least` returns the smallest prime of the form h·2^k + 1 with
h < 2^k above a target, k = ⌈bits/2⌉ + 1. Proth's theorem makes it *proven*: such a number is
prime iff a^{(P−1)/2} ≡ −1 (mod P) for some a, and a quadratic non-residue a gives that. One
modular exponentiation certifies a prime of thousands of bits, where a general primality proof
takes minutes (FLINT's ``is_prime`` needs 80 s at 3000 bits).

**Interpolation.** :func:`interpolate` is the subproduct-tree algorithm (von zur Gathen &
Gerhard, Modern Computer Algebra, Alg. 10.11): M = ∏(x − x_i) by a product tree, weights
y_i / M′(x_i) by the remainder tree down the same tree (Alg. 10.5; building it once saves the
second tree a library multipoint evaluation would build), then Σ w_i·M/(x − x_i) combined up
it. O(M(n) log n) field operations instead of Lagrange's O(n²).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import flint
import gmpy2

_WITNESSES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73)


def _proth_certified(candidate: int) -> bool:
    """Proth's test with the small witnesses: True only for a proven prime."""
    half = (candidate - 1) // 2
    for a in _WITNESSES:
        if gmpy2.jacobi(a, candidate) == -1:
            return bool(pow(gmpy2.mpz(a), half, candidate) == candidate - 1)
    return False


def proth_prime_at_least(target: int) -> int:
    """The smallest Proth prime h·2^k + 1 ≥ *target* (k = ⌈log₂ target / 2⌉ + 1, h < 2^k)."""
    k = (max(target, 4).bit_length() + 1) // 2 + 1
    h = max(1, -(-(target - 1) >> k))
    while h < (1 << k):
        candidate = (h << k) + 1
        if gmpy2.is_prime(candidate) and _proth_certified(candidate):
            return int(candidate)
        h += 1
    return proth_prime_at_least(1 << (2 * k))


def polynomial_ring(modulus: int) -> Any:
    """F_P[x] (python-flint)."""
    return flint.fmpz_mod_poly_ctx(modulus)


def subproduct_tree(ring: Any, xs: Sequence[int]) -> list[list[Any]]:
    """The levels of the product tree of the (x − x_i): leaves first, the product M last."""
    levels = [[ring([-x, 1]) for x in xs]]
    while len(levels[-1]) > 1:
        below = levels[-1]
        levels.append(
            [
                below[i] * below[i + 1] if i + 1 < len(below) else below[i]
                for i in range(0, len(below), 2)
            ]
        )
    return levels


def remainders(polynomial: Any, levels: list[list[Any]]) -> list[Any]:
    """polynomial(x_i) for the leaves (x − x_i) of *levels*, by the remainder tree (von zur
    Gathen & Gerhard Alg. 10.5): reduce modulo each node, top down."""
    current = [polynomial % levels[-1][0]]
    for below in reversed(levels[:-1]):
        current = [current[i // 2] % node for i, node in enumerate(below)]
    return [leaf.constant_coefficient() for leaf in current]


def interpolate(ring: Any, xs: Sequence[int], ys: Sequence[int]) -> Any:
    """The polynomial of degree < len(xs) through (x_i, y_i), x_i distinct (subproduct tree,
    built once for M′(x_i) and for the combination)."""
    levels = subproduct_tree(ring, xs)
    weights = remainders(levels[-1][0].derivative(), levels)
    current = [ring([y * w.inverse()]) for y, w in zip(ys, weights, strict=True)]
    for below in levels[:-1]:
        current = [
            current[i] * below[i + 1] + current[i + 1] * below[i]
            if i + 1 < len(current)
            else current[i]
            for i in range(0, len(current), 2)
        ]
    return current[0]
