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
Gerhard, Modern Computer Algebra, Alg. 10.11): M = ∏(x − x_i) by a product tree, the values
M′(x_i) down the same tree (building it once saves the second tree a library multipoint
evaluation would build), then Σ (y_i/M′(x_i))·M/(x − x_i) combined up it. The values come from
the *scaled* remainder tree (:func:`values_at_leaves`; Bernstein, "Scaled remainder trees",
2004), which replaces Alg. 10.5's division at every node by one truncated product per child:
about three products per level where the remainders cost about five (measured with FLINT). The
1/M′(x_i) share one modular inversion (Montgomery's trick). O(M(n) log n) field operations
instead of Lagrange's O(n²).
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


def values_at_leaves(polynomial: Any, levels: list[list[Any]]) -> list[int]:
    """polynomial(x_i) for the leaves (x − x_i) of *levels*, for a polynomial f of degree below
    the number N of leaves, by the scaled remainder tree (Bernstein 2004).

    For a node v with product M_v of degree d_v, keep the first d_v coefficients s_1 … s_{d_v}
    of f/M_v's fractional part (f mod M_v)/M_v = Σ_{k≥1} s_k·x^{−k}, as S_v = Σ_k s_k·t^{d_v−k}.
    At the root, f/M = t·rev(f)/rev(M) with t = 1/x: one power-series inverse. If M_v = M_u·M_w,
    f/M_u = (f/M_v)·M_w, and the polynomial part of f/M_v times M_w is a polynomial, so u's
    fractional part is that of (fractional part of f/M_v)·M_w: S_u = (S_v·M_w mod t^{d_v}) / t^{d_w}
    (a node without a sibling keeps S_v). At a leaf, f/(x − x_i) = f(x_i)/x + …, so S = f(x_i).
    """
    root = levels[-1][0]
    size = root.degree()
    inverse = root.reverse(size).inverse_series_trunc(size)
    current = [polynomial.reverse(size - 1).mul_low(inverse, size).reverse(size - 1)]
    for parents, below in zip(reversed(levels[2:]), reversed(levels[1:-1]), strict=True):
        current = [
            _child(current[i // 2], parents[i // 2].degree(), below, i) for i in range(len(below))
        ]
    if len(levels) == 1:
        return [int(current[0].constant_coefficient())]
    # The leaves, in integers: for a pair (x − a), (x − b) under S_v = c₀ + c₁t,
    # S_u = (S_v·(t − b) mod t²)/t = c₀ − b·c₁, and c₀ − a·c₁ for the other.
    modulus = int(root.modulus())
    roots = [-int(leaf.constant_coefficient()) for leaf in levels[0]]
    values = []
    for i, scaled in enumerate(current):
        c0, c1 = (int(c) for c in (*scaled.coeffs(), 0, 0)[:2])
        pair = roots[2 * i : 2 * i + 2]
        if len(pair) == 1:  # a leaf without a sibling: S_v = S_u, a constant
            values.append(c0)
        else:
            values += [(c0 - pair[1] * c1) % modulus, (c0 - pair[0] * c1) % modulus]
    return values


def _child(scaled: Any, degree: int, below: list[Any], i: int) -> Any:
    """S_u for the node below[i] from its parent's S_v (:func:`values_at_leaves`)."""
    if i ^ 1 >= len(below):
        return scaled
    sibling = below[i ^ 1]
    return scaled.mul_low(sibling, degree).right_shift(sibling.degree())


def inverses(values: Sequence[int], modulus: int) -> list[int]:
    """1/v mod P for nonzero v, with one modular inversion (Montgomery's trick)."""
    prefix = [1]
    for v in values:
        prefix.append(prefix[-1] * v % modulus)
    running = pow(prefix[-1], -1, modulus)
    result = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        result[i] = running * prefix[i] % modulus
        running = running * values[i] % modulus
    return result


def interpolate(ring: Any, xs: Sequence[int], ys: Sequence[int]) -> Any:
    """The polynomial of degree < len(xs) through (x_i, y_i), x_i distinct (subproduct tree,
    built once for the values M′(x_i) and for the combination)."""
    modulus = int(ring.modulus())
    levels = subproduct_tree(ring, xs)
    weights = inverses(values_at_leaves(levels[-1][0].derivative(), levels), modulus)
    c = [y * w % modulus for y, w in zip(ys, weights, strict=True)]
    # The leaves' level in integers: c_i·(x − x_j) + c_j·(x − x_i) for each pair.
    current = [
        ring([-(c[i] * xs[i + 1] + c[i + 1] * xs[i]), c[i] + c[i + 1]])
        if i + 1 < len(c)
        else ring([c[i]])
        for i in range(0, len(c), 2)
    ]
    for below in levels[1:-1]:
        current = [
            current[i] * below[i + 1] + current[i + 1] * below[i]
            if i + 1 < len(current)
            else current[i]
            for i in range(0, len(current), 2)
        ]
    return current[0]
