"""Error bounds shared by the releasers: the worst case over every dataset of at most n rows,
bounded sharply enough that the declared a is within a few percent of the true worst case
(docs/mechanisms.md#histogram-releasers).

Balcer & Vadhan bound a release's simultaneous error by a union bound over bins, each with the
sampler's two-sided (a, β) (full version Thm 5.3, 5.6, 6.10). Two things make that loose:

- **One-sided tails.** An empty bin can only err upwards, and a bin is *dropped* (released as 0)
  only when its noisy count is at most a cut, so a dropped bin of true count c > a fails through
  one tail. :func:`bin_failure` is the exact failure probability of one bin.
- **Few heavy bins.** A dataset of n rows has at most n/c bins of count c. With f(c) the failure
  probability of a bin of count c, the failure probability of a release is at most Σ_x f(c_x)
  ≤ n·max_c f(c)/c (a fractional knapsack), which the worst dataset, ⌊n/c⌋ bins of the worst
  count, nearly attains.

Everything is exact rational arithmetic on the sampler's scaled CDF F(c, z) = d·Pr[M(c, U) ≤ z];
counts the scan does not reach are covered by the sampler's own declared (a, β).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq

from dpplug.exact import smallest_at_least
from dpplug.kinds import CountingQuerySampler

#: The scan of :func:`dropping_simultaneous` visits at most this many counts, and at most this
#: many bits of scaled-CDF values (counts × bits of d), so its cost is bounded whatever the
#: sampler; past it, the releaser falls back to the union bound.
SCAN_COUNTS = 1 << 12
SCAN_BITS = 1 << 21
#: Working precision of :func:`order_statistic_below`.
_LOG_PRECISION = 128


def bin_failure(sampler: CountingQuerySampler, count: int, a: int, cut: int) -> Any:
    """Pr[M(c, U) ∉ [c − a, c + a], or c > a and M(c, U) ≤ cut], exactly: a bin of true count c
    misses by more than a, or is dropped (its noisy count at most *cut*) while its count
    exceeds a. With cut = −1 it is the plain two-sided tail."""
    d = int(sampler.d or 0)
    low = sampler.scaled_cdf(count - a - 1, count)
    bad = low + d - sampler.scaled_cdf(count + a, count)
    if count > a and cut >= count - a:
        bad += sampler.scaled_cdf(min(cut, count + a), count) - low
    return mpq(bad, d)


def dropping_simultaneous(sampler: CountingQuerySampler, n: int, cut: int, beta: Any) -> int | None:
    """The smallest a such that, for every dataset of at most n rows, Σ_x f(c_x) ≤ β, with f
    the :func:`bin_failure` of a release that drops bins whose noisy count is at most *cut*
    (``None`` past the scan budget :data:`SCAN_COUNTS`, :data:`SCAN_BITS`).

    It is the smallest a with f(c, a)·n ≤ β·c for every c ∈ [1, n]: then Σ_x f(c_x) ≤ β·Σ_x c_x/n
    ≤ β. f(c, ·) is non-increasing, so one pass over c raises a where needed (a bisection over
    a for that c). Counts above C = min(n, cut + a) cannot be dropped without erring by more
    than a, so f(c, a) is the sampler's two-sided tail there, at most β(C+1)/n ≤ β·c/n once a is
    at least the sampler's declared a at β(C+1)/n; the pass ends with that check.
    """
    budget = min(SCAN_COUNTS, SCAN_BITS // max(1, int(sampler.d or 1).bit_length()))
    a, count = 0, 1
    while True:
        covered = min(n, cut + a)
        if count > covered:
            if covered == n:
                return a
            tail = sampler.accuracy(beta * (covered + 1) / n).per_query.a
            if tail <= a:
                return a
            a = tail
            continue
        if count > budget:
            return None
        if not _within(sampler, count, a, cut, n, beta):
            within = partial(_within, sampler, count, cut=cut, n=n, beta=beta)
            a = smallest_at_least(within, a, n, True)
        count += 1


def _within(sampler: CountingQuerySampler, count: int, a: int, cut: int, n: int, beta: Any) -> bool:
    """f(count, a)·n ≤ β·count (see :func:`dropping_simultaneous`)."""
    return bool(bin_failure(sampler, count, a, cut) * n <= beta * count)


def empty_maximum_quantile(sampler: CountingQuerySampler, bins: int, beta: Any) -> int:
    """The smallest v with bins·Pr[|M(0, U)| > v] ≤ β: then no empty bin of at most *bins* errs
    by more than v, and in particular their largest noisy count is at most v, except with
    probability β (union bound; M(0, U) < 0 has probability 0 for the releasers' samplers)."""
    d, n = int(sampler.d or 0), sampler.count_bounds[1]

    def tail(v: int) -> int:
        return int(sampler.scaled_cdf(-v - 1, 0)) + d - int(sampler.scaled_cdf(v, 0))

    return smallest_at_least(lambda v: bins * tail(v) <= beta * d, 0, n, True)


def empty_rate(sampler: CountingQuerySampler, bins: int, w: int) -> Any:
    """λ(w) = bins·Pr[M(0, U) ≥ w]: the expected number of empty bins (of at most *bins*) whose
    noisy count is at least w, exactly."""
    d = int(sampler.d or 0)
    return mpq(bins * (d - int(sampler.scaled_cdf(w - 1, 0))), d)


def order_statistic_below(rate: Any, k: int, beta: Any) -> bool:
    """Whether the k-th largest of iid draws is below w except with probability β, given the
    expected number *rate* of draws at or above w: Pr[Bin(m, q) ≥ k] ≤ C(m, k)·q^k ≤ rate^k/k!,
    and for rate < k also ≤ e^{k − rate}·(rate/k)^k (Chernoff). Decided rigorously: MPFR logs,
    each term rounded the safe way."""
    if rate == 0:
        return True
    rate = mpq(rate)
    with gmpy2.context(precision=_LOG_PRECISION, round=gmpy2.RoundDown):
        log_beta = gmpy2.log(mpfr(mpq(beta)))
        log_factorial = gmpy2.lgamma(mpfr(k + 1))[0]
        rate_low, k_log_k = mpfr(rate), k * gmpy2.log(mpfr(k))
    with gmpy2.context(precision=_LOG_PRECISION, round=gmpy2.RoundUp):
        k_log_rate = k * gmpy2.log(mpfr(rate))
        bound = k_log_rate - log_factorial
        if rate < k:
            bound = min(bound, k - rate_low + k_log_rate - k_log_k)
        return bool(bound <= log_beta)


def dense_split(beta: Any, bins: int, nonempty: int) -> tuple[Any, Any]:
    """β split between the empty bins' one-sided tails and the at most *nonempty* bins' two-sided
    ones of a dense release over *bins* labels, in proportion to their union-bound weights
    (1 and 2 per bin): (β for the empty bins, β for each nonempty bin)."""
    weight = bins + 2 * nonempty
    return beta * mpq(bins, weight), beta * mpq(2, weight)
