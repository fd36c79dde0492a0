"""Error bounds shared by the releasers: the worst case over every dataset of at most n rows,
bounded sharply enough that the declared a is within a few percent of the true worst case
(docs/mechanisms.md#histogram-releasers).

Balcer & Vadhan bound a release's simultaneous error by a union bound over bins, each with the
sampler's two-sided (a, β) (full version Thm 5.3, 5.6, 6.10). Two things make that loose:

- **One-sided tails.** An empty bin can only err upwards, a bin of count c ≤ a only upwards too
  (outputs are at least 0), and a bin is *dropped* (released as 0) only when its noisy count is
  at most a cut, so a dropped bin of true count c > a fails through one tail. :func:`bin_failure`
  is the exact failure probability of one bin.
- **Few heavy bins.** A dataset of n rows has at most n/c bins of count c. With f(c) the failure
  probability of a bin of count c, the failure probability of a release is at most Σ_x f(c_x)
  ≤ n·max_c f(c)/c (a fractional knapsack), which the worst dataset, ⌊n/c⌋ bins of the worst
  count, nearly attains. A dense release (:func:`dense_simultaneous`) counts every label's
  empty-bin tail once and only what a nonempty bin adds to it against the rows, so of the n
  nonempty bins only about n/(a + 1), those that can err downwards, count twice.

Everything is exact rational arithmetic on the sampler's law, Pr[M(c, U) ≤ z] (:func:`at_most`):
the scaled CDF F(c, z)/d, or a sampler's own closed form of it where F is long (GeoSample's d
has n·log₂ a bits, its probabilities are short powers of b/a). Counts the scan does not reach
are covered by the sampler's own declared (a, β).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq

from dpplug.exact import Rat, smallest_at_least
from dpplug.kinds import CountingQuerySampler

#: The scans of :func:`dropping_simultaneous` and :func:`dense_simultaneous` visit at most this
#: many counts, and at most this many bits of scaled-CDF values (counts × bits of d) for samplers
#: read through F, so their cost is bounded whatever the sampler; counts past the scan are
#: covered by the sampler's declared per-query bound.
SCAN_COUNTS = 1 << 12
SCAN_BITS = 1 << 21
#: :func:`largest_tail` steps β′ by this factor by default: τ is then at most 1/0.99 times the
#: sampler's smallest declared β′ at a given a.
TAIL_STEP = mpq(99, 100)
#: Working precision of :func:`order_statistic_below`.
_LOG_PRECISION = 128


def at_most(sampler: CountingQuerySampler, z: int, count: int) -> Rat:
    """Pr[M(count, U) ≤ z], exactly: the sampler's ``probability_at_most(z, count)`` where it
    declares that closed form (it must equal F(count, z)/d: tested for the built-ins), else the
    scaled CDF over d."""
    closed = getattr(sampler, "probability_at_most", None)
    if closed is not None:
        return mpq(closed(z, count))
    return mpq(sampler.scaled_cdf(z, count), int(sampler.d or 0))


def scan_budget(sampler: CountingQuerySampler) -> int:
    """How many counts a scan reads (:data:`SCAN_COUNTS`, fewer when F is long)."""
    if getattr(sampler, "probability_at_most", None) is not None:
        return SCAN_COUNTS
    return min(SCAN_COUNTS, SCAN_BITS // max(1, int(sampler.d or 1).bit_length()))


def bin_failure(sampler: CountingQuerySampler, count: int, a: int, cut: int) -> Rat:
    """Pr[M(c, U) ∉ [c − a, c + a], or c > a and M(c, U) ≤ cut], exactly: a bin of true count c
    misses by more than a, or is dropped (its noisy count at most *cut*) while its count
    exceeds a. With cut = −1 it is the plain two-sided tail."""
    low = at_most(sampler, count - a - 1, count)
    bad = low + 1 - at_most(sampler, count + a, count)
    if count > a and cut >= count - a:
        bad += at_most(sampler, min(cut, count + a), count) - low
    return bad


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
    budget = scan_budget(sampler)
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
            a = _galloping(partial(_within, sampler, count, cut=cut, n=n, beta=beta), a + 1, n)
        count += 1


def _galloping(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest j in [low, high] with holds(j), for monotone *holds* with holds(high): probes
    low, low + 1, low + 3, … then bisects, so probes stay within twice the answer's distance."""
    step, probe = 1, low
    while probe < high and not holds(probe):
        low, probe, step = probe + 1, min(high, probe + step), 2 * step
    return smallest_at_least(holds, low, probe, True)


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


def largest_tail(
    sampler: CountingQuerySampler, a: int, smallest: Rat, step: Rat = TAIL_STEP
) -> Rat:
    """A rational τ ≥ Pr[|M(c, U) − c| > a] for every count c, from the sampler's own declared
    per-query bound: the smallest β′ = step^k ≥ *smallest* at which it declares an a′ ≤ a
    (*smallest* itself if it declares one there, 1 if none). A galloping search over k."""
    if sampler.accuracy(smallest).per_query.a <= a:
        return mpq(smallest)

    def declared(k: int) -> bool:
        return bool(step**k > smallest and sampler.accuracy(step**k).per_query.a <= a)

    low, high = 0, 1  # step^low is declared at most a (β′ = 1 trivially), step^high not
    while declared(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if declared(middle) else (low, middle)
    return step**low


def dense_simultaneous(
    sampler: CountingQuerySampler,
    bins: int,
    n: int,
    beta: Rat,
    empty_tail: Callable[[int], Rat] | None = None,
) -> int:
    """The smallest a (a bisection, then checked upwards) for which every dataset of at most n
    rows over *bins* labels has Σ_x f(c_x, a) ≤ β, with f(c, a) = Pr[|M(c, U) − c| > a] for a
    nonempty bin and e(a) = f(0, a) for an empty one (Pr[M(0, U) > a] for the built-in
    samplers, whose outputs are at least 0), or *empty_tail*, for releasers whose empty labels
    read another law. Writing Σ_x f(c_x) = bins·e + Σ_{c_x > 0} (f(c_x) − e),

        Σ_x f(c_x, a) ≤ bins·e(a) + n·max_{1≤c≤C} (f(c, a) − e(a))⁺/c + ⌊n/(C + 1)⌋·τ(a)

    with C = min(n, :func:`scan_budget`) and τ(a) ≥ max_c f(c, a) (:func:`largest_tail`; at most
    ⌊n/(C + 1)⌋ bins have more than C rows). For the built-in samplers (noise symmetric about the
    count, clamped to [0, n], perhaps mixed with a uniform count) f(c, a) − e(a) is the lower tail
    alone, 0 for c ≤ a, so the worst dataset is about n/(a + 1) bins of count a + 1 and the bound
    is that of the union bound over it. The scan of c stops where τ(a)/c falls below the
    maximum found (no later count can exceed it)."""
    budget = min(n, scan_budget(sampler))
    heavy = n // (budget + 1)

    def empty(a: int) -> Rat:
        if empty_tail is not None:
            return mpq(empty_tail(a))
        return bin_failure(sampler, 0, a, -1)

    def holds(a: int) -> bool:
        each = empty(a)
        if bins * each > beta:
            return False
        # τ to within 10/9 (the ⌊n/(C + 1)⌋ bins it covers are few next to the n/(a + 1)
        # scanned) and down to far below β/n, where it also ends the scan early.
        tau = largest_tail(sampler, a, beta / (n << 256), mpq(9, 10))
        total = bins * each + heavy * tau
        worst = mpq(0)
        for count in range(1, budget + 1):
            if worst and tau <= worst * count:
                break
            excess = (bin_failure(sampler, count, a, -1) - each) / count
            if excess > worst:
                worst = excess
                if total + n * worst > beta:
                    return False
        return bool(total + n * worst <= beta)

    high = 1
    while not holds(high):
        high *= 2
    a = smallest_at_least(holds, high // 2, high, True)
    while not holds(a):  # the bound need not be monotone in a; the answer must satisfy it
        a += 1
    return a
