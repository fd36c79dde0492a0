"""The accuracy of the sparse projection (Blum & Roth, "Fast Private Data Release Algorithms for
Sparse Queries", RANDOM 2013, Lemma 4.6, Cor. 4.7, Thm 4.9;
docs/mechanisms.md#sparse-projection), for the dimension T the user chose, every bound evaluated
rigorously (:mod:`dpplug.bounds`).

Scaled units: for a query with weights w_x ≤ W (at most m of them), data counts c_x (Σ c_x ≤ n)
and the r-wise independent ±1 matrix A, P_i = Σ_x w_x·A[i, x] and S_i = Σ_x c_x·A[i, x], the
released answer is Σ_i P_i·(S_i + Z_i)/(n·T·W). Since A[i, x]² = 1,
Σ_i P_i·S_i = T·n·W·Q(D) + E with E = Σ_i Y_i, Y_i = Σ_{x≠y} w_x·c_y·A[i, x]·A[i, y], so the
error in grid units is (E + Σ_i P_i·Z_i)/T. The bounds are for q queries fixed before the
release (q = k for all of them, q = 1 for one), each failing with probability at most its share
of β.

**Row sums of degree-2 terms** (:func:`row_sum_error`). E (and F below) is a sum over the T rows
of terms Y_i that are degree-2 polynomials in row i's entries, with |Y_i| ≤ M and E[Y_i²] ≤ σ²
when the entries are independent. For even p with 2p ≤ r, E[E^p] is what it is for fully
independent entries (each monomial of E^p has at most r distinct entries), and then the Y_i are
independent and Bennett's lemma gives E[e^{±λY_i}] ≤ exp(σ²·φ(λM)/M²), φ(u) = e^u − 1 − u; as
x^p/p! ≤ cosh(x) for even p, E[E^p] ≤ p!·λ^{−p}·exp(T·σ²·φ(λM)/M²) for every λ > 0, and Markov
with a union bound over q queries gives
t = min_{p, λ} (q·p!·exp(T·σ²·φ(λM)/M²)/β)^{1/p}/λ (Bennett's inequality within a factor
(p!)^{1/p}/(p/e), recovered from moments the hash controls).

1. **Projection (JL) error.** |Y_i| ≤ Σ_x w_x·Σ_y c_y ≤ m·W·n, and E[Y_i²] = V with
   V = Σ_{x<y} (w_x c_y + w_y c_x)², a positive semidefinite quadratic form in c, hence largest
   at a vertex c = n·e_y of the simplex, where it is n²(|w|² − w_y²) ≤ n²·m·W². So
   t₁ = row_sum_error(T, σ² = n²·m·W², M = m·W·n). (Blum & Roth bound this term through Thm 4.1's
   limited-independence JL lemma, whose constant 4·64² and the |D|₂² ≤ n² of Cor. 4.2 need
   T ≈ n⁴ for a non-trivial bound; this bound needs T ≈ m·ln(k/β)/α².)
2. **The projected query** (Lemma 4.6). For even p ≤ r, E[P_i^p] ≤ W^p·M_p(m) with
   M_p(m) = E[(Σ_{j≤m} R_j)^p] for m independent signs (an exact integer: every term of the
   expansion is a non-negative product of weights over tuples with even multiplicities), so
   max_{i,Q} |P_i| ≤ B = min(m·W, min_p W·(q·T·M_p(m)/β₂)^{1/p}) (the lemma's moment bound,
   computed exactly instead of through Stirling); and Σ_i P_i² = T·|w|² + F with
   F = Σ_i Σ_{x≠y} w_x w_y A[i, x]A[i, y], whose row terms have |F_i| ≤ m²W² and
   E[F_i²] = 4Σ_{x<y} w_x²w_y² ≤ 2m²W⁴, so Σ_i P_i² ≤ Σ₂ = T·m·W² + row_sum_error(T, 2m²W⁴,
   m²W²).
3. **Noise**, given those (it is independent of the hash). Discrete Gaussian Z_i of variance
   σ² are σ²-subgaussian (CKS 2020 §2.3), so Σ_i P_i·Z_i is (σ²·Σ₂)-subgaussian and
   u = σ·√(2Σ₂·ln(2q/β₃)). For discrete Laplace Z_i of scale b, g(y) = ln E[e^{yZ}]/y² is
   non-decreasing in |y| (:func:`dpplug.discrete_noise.laplace_log_mgf`), so for
   0 < λ < 1/(bB), Σ_i ln E[e^{λP_iZ_i}] ≤ Σ₂·λ²·g(λB), and Chernoff gives
   u = (Σ₂·λ²·g(λB) + ln(2q/β₃))/λ at the best λ (a sharper form of Lemma 4.8).

The declared a (grid units) is ⌈(t₁ + u)/T⌉, at most n·W. The shares are β/3 each (Gaussian:
projection, Σ₂, noise) or β/4 each (Laplace: projection, B, Σ₂, noise).
"""

from __future__ import annotations

import math
from functools import cache, partial

from gmpy2 import mpq
from scipy.optimize import minimize_scalar

from dpplug.bounds import Ball, ball, log_float, upper_of
from dpplug.discrete_noise import laplace_log_mgf
from dpplug.exact import Rat

#: The largest moment order any bound uses (the hash's independence r is at most twice this).
MAX_ORDER = 128


@cache
def rademacher_moments(m: int) -> tuple[int, ...]:
    """M_p(m) = E[(R₁ + … + R_m)^p] for independent uniform signs, p = 0 … MAX_ORDER, exactly.

    The moments of a sum of independent variables are the binomial convolution of theirs
    (M_p(a + b) = Σ_j C(p, j)·M_j(a)·M_{p−j}(b)), one sign has moments 1, 0, 1, 0, …, and m signs
    are reached by repeated doubling: O(MAX_ORDER²·log m) integer operations.
    """

    def convolve(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(
            sum(math.comb(p, j) * a[j] * b[p - j] for j in range(0, p + 1, 2))
            for p in range(MAX_ORDER + 1)
        )

    one = tuple(1 - p % 2 for p in range(MAX_ORDER + 1))
    result = tuple(int(p == 0) for p in range(MAX_ORDER + 1))
    base, exponent = one, m
    while exponent:
        if exponent & 1:
            result = convolve(result, base)
        exponent >>= 1
        if exponent:
            base = convolve(base, base)
    return result


def _even_orders(limit: int) -> range:
    return range(2, min(limit, MAX_ORDER) + 1, 2)


def _row_sum_exponent(
    p: int, lam: float, dimension: int, spread: float, log_q_over_beta: float
) -> float:
    """ln t for moment order p and λ, with M = 1 and σ² = *spread* (scale-free), in floats."""
    return (
        log_q_over_beta + math.lgamma(p + 1) + dimension * spread * (math.expm1(lam) - lam)
    ) / p - math.log(lam)


def _row_sum_choice(
    dimension: int, spread: float, log_q_over_beta: float, limit: int
) -> tuple[int, float]:
    """The (p, λ) minimising the row-sum bound with M = 1 (float search), p even ≤ *limit*."""
    best: tuple[float, int, float] | None = None
    for p in range(2, limit + 1, 2):
        found = minimize_scalar(
            lambda lam, p=p: _row_sum_exponent(p, lam, dimension, spread, log_q_over_beta),
            bounds=(1e-12, 50.0),
            method="bounded",
            options={"xatol": 1e-10},
        )
        if best is None or found.fun < best[0]:
            best = (float(found.fun), p, float(found.x))
    assert best is not None
    return best[1], best[2]


def row_sum_error(
    dimension: int, variance: Rat, bound: Rat, queries: int, beta: Rat, rank: int
) -> Rat:
    """t such that, for each of q queries, |Σ_{i≤T} Y_i| ≥ t with probability at most β/q, for
    row terms of degree 2 with |Y_i| ≤ M = *bound* and E[Y_i²] ≤ σ² = *variance* (see the module
    docstring), using moment orders p with 2p ≤ r."""
    spread = mpq(variance) / mpq(bound) ** 2
    p, lam = _row_sum_choice(
        dimension, float(spread), log_float(mpq(queries) / mpq(beta)), min(rank // 2, MAX_ORDER)
    )
    lam_q = mpq(lam)

    def t() -> Ball:
        x = ball(lam_q)
        exponent = (
            ball(mpq(queries) / mpq(beta)).log()
            + ball(p + 1).lgamma()
            + dimension * ball(spread) * (x.expm1() - x)
        ) / p
        return exponent.exp() / x * ball(bound)

    return upper_of(t)


def projection_error(
    dimension: int, sparsity: int, grid: int, n: int, rank: int, queries: int, beta: Rat
) -> Rat:
    """t₁ (bound 1 of the module docstring), in scaled units."""
    return row_sum_error(
        dimension,
        mpq(n * n * sparsity * grid * grid),
        mpq(sparsity * grid * n),
        queries,
        beta,
        rank,
    )


def coefficient_bound(
    dimension: int, sparsity: int, grid: int, rank: int, queries: int, beta: Rat
) -> Rat:
    """B (Lemma 4.6): every |P_i| of q queries is at most B except with probability β (and
    always at most m·W)."""

    def at(p: int) -> Ball:
        count = queries * dimension * rademacher_moments(sparsity)[p]
        return grid * (ball(count) / ball(beta)).root(p)

    moment_bound = min(upper_of(partial(at, p)) for p in _even_orders(rank))
    return min(moment_bound, mpq(sparsity * grid))


def energy_bound(
    dimension: int, sparsity: int, grid: int, rank: int, queries: int, beta: Rat
) -> Rat:
    """Σ₂: Σ_i P_i² of each of q queries is at most Σ₂ except with probability β."""
    square = sparsity * grid * grid
    spread = row_sum_error(
        dimension, mpq(2 * square * square), mpq(sparsity * square), queries, beta, rank
    )
    return dimension * square + spread


def gaussian_noise_error(sigma2: Rat, energy: Rat, queries: int, beta: Rat) -> Rat:
    """u for discrete Gaussian noise of variance σ² (bound 3)."""
    return upper_of(
        lambda: (2 * ball(sigma2) * ball(energy) * (2 * ball(queries) / ball(beta)).log()).sqrt()
    )


def laplace_noise_error(scale: Rat, coefficient: Rat, energy: Rat, queries: int, beta: Rat) -> Rat:
    """u for discrete Laplace noise of scale b (bound 3), at a λ in (0, 1/(bB)) chosen by a
    float search and evaluated in balls."""
    b, big, total = float(scale), float(coefficient), float(energy)
    log_term = log_float(2 * queries / mpq(beta))
    limit = 1 / (b * big)

    r = 1 / math.expm1(1 / b)  # q/(1 − q) with q = e^{−1/b}

    def g(y: float) -> float:
        value = -math.log1p(-r * math.expm1(y)) - math.log1p(-r * math.expm1(-y))
        return value / (y * y)

    def objective(lam: float) -> float:
        return (total * lam * lam * g(lam * big) + log_term) / lam

    found = minimize_scalar(  # over ln(λ/limit), so that the tolerance is relative
        lambda t: objective(limit * math.exp(t)),
        bounds=(math.log(1e-12), math.log1p(-1e-9)),
        method="bounded",
        options={"xatol": 1e-9},
    )
    lam = mpq(limit * math.exp(float(found.x)))

    def at() -> Ball:
        x = ball(lam * mpq(coefficient))
        g_bound = laplace_log_mgf(scale, x) / (x * x)
        chernoff = (2 * ball(queries) / ball(beta)).log()
        return (ball(energy) * ball(lam) ** 2 * g_bound + chernoff) / ball(lam)

    return upper_of(at)


def best_rank(dimension: int, sparsity: int, queries: int, beta: Rat, laplace: bool) -> int:
    """The hash independence r: twice the best moment order of bound 1 (a float search; every
    bound then uses orders p with 2p ≤ r, or p ≤ r for Lemma 4.6)."""
    share = mpq(beta) / (4 if laplace else 3)
    p, _ = _row_sum_choice(dimension, 1 / sparsity, log_float(mpq(queries) / share), MAX_ORDER // 2)
    return 2 * p
