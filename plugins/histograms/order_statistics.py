"""The top k order statistics of m iid draws of M(0, U), exactly and approximately
(Balcer & Vadhan, full version Prop. 6.6 / Alg. 6.7 and Alg. 6.20;
docs/mechanisms.md#order-statistics).

Both are programs (:mod:`.program`) returning (v_0 ≥ v_1 ≥ … ≥ v_{k−1}) for draws with scaled
CDF F on [0, top] (F(top) = d).

**Exact, corrected binomial method** (:func:`exact_order_statistics`, full version Alg. 6.7,
corrected). For v = top … 1: ℓ_v ~ Bin(m − assigned, p_v) with p_v = (F(v) − F(v−1))/F(v),
clamped to what is still missing, then v repeated ℓ_v times; the rest are 0. Given the counts
above v, the remaining draws are iid conditioned on being ≤ v, hence the binomial. The ITCS
version (Alg. 6) instead draws from (F(z)/F(v))^i, which is only right for continuous laws (the
tests keep the counterexample). Its cost is linear in m, so it serves small universes and the
tests.

**Approximate, certified** (:func:`approximate_order_statistics`). The same law, sampled in jumps
instead of value by value, as the issue suggests: while nothing is assigned below v_hi, a single
(F(w)/F(v_hi))^R decides that no remaining draw exceeds w.

1. The largest of the R remaining draws (all ≤ v_hi) has CDF G(w) = (F(w)/F(v_hi))^R; draw it by
   inverse CDF (binary search over w).
2. Given that it is v, the number N of draws equal to v is Bin(R, p_v) conditioned on N ≥ 1, with
   CDF C_j = Σ_{i=1..j} Pr[N = i] / (1 − (1−p_v)^R); draw it by inverse CDF over j = 1 … k′−1,
   where k′ is what is still missing (N ≥ k′ is one outcome: the clamp).
3. v is repeated min(N, k′) times, R −= N, v_hi = v − 1; at v_hi = 0 the rest are 0.

This is the law of the exact method: the chance that ℓ_w = 0 for all w in (v, v_hi] and ℓ_v ≥ 1
is (F(v)/F(v_hi))^R − (F(v−1)/F(v_hi))^R = G(v) − G(v−1), and ℓ_v given that is N above.

**Certified comparisons and the total-variation bound.** Each inverse CDF draws one b-bit
integer u and must decide, for thresholds C (values of G or C_j, rationals far too large to
write down), whether U < C for U uniform in the cell [u, u+1)/2^b. Integer fixed-point bounds
lo ≤ C·2^p ≤ hi, rounded down and up at every step (so they are rigorous), are computed at
p = 64, 256, 1024, … bits. The decision is taken as soon as the cell lies wholly below or above
[lo, hi]·2^{−p}; if instead the interval has shrunk below half a cell first, the decision is
"U ≥ C". Couple this with the exact inverse CDF on a continuous U in the same cell: they differ
only if the cell meets an interval of width ≤ 2^{−b−1} around some threshold, which has
probability at most 2·2^{−b} per threshold. Step 1 has at most top + 1 thresholds and step 2 at
most k; there are at most k jumps. So

    TV(approximate, exact) ≤ 2·k·(top + 1 + k)·2^{−b}            (:func:`total_variation_bound`)

and :func:`bits_for` picks the smallest b making this at most a target δ. The interval widths
go to 0 as p grows, so every decision ends; the number of decisions is at most k·(log₂(top+1)
+ 2), independent of the data.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from math import comb
from typing import Any

from gmpy2 import mpq, mpz

from dpplug.exact import ceil_div, ceil_log2
from dpplug.program import Bits, Categorical, Prefix, Program

Cdf = Callable[[int], int]

_FIRST_PRECISION = 64


def binomial_pmf(trials: int, p: Any) -> dict[int, Any]:
    """The exact law of Bin(trials, p) (p rational)."""
    return {j: comb(trials, j) * p**j * (1 - p) ** (trials - j) for j in range(trials + 1)}


def exact_order_statistics(cdf: Cdf, top: int, m: int, k: int) -> Program[tuple[int, ...]]:
    """The top k of m iid draws with scaled CDF *cdf* on [0, top] (the corrected binomial
    method)."""
    values: list[int] = []
    for v in range(top, 0, -1):
        if len(values) == k:
            break
        total = cdf(v)
        p = mpq(total - cdf(v - 1), total) if total else mpq(0)
        ell = yield Categorical(binomial_pmf(m - len(values), p))
        values += [v] * min(ell, k - len(values))
    return tuple(values + [0] * (k - len(values)))


def total_variation_bound(top: int, k: int, bits: int) -> Any:
    """The bound on TV(approximate, exact) of the module docstring, exactly."""
    return mpq(2 * k * (top + 1 + k), 1 << bits)


def bits_for(top: int, k: int, delta: Any) -> int:
    """The smallest b with :func:`total_variation_bound` ≤ *delta*."""
    return max(1, ceil_log2(mpq(2 * k * (top + 1 + k)) / delta))


def approximate_order_statistics(
    cdf: Cdf, top: int, m: int, k: int, bits: int
) -> Program[tuple[int, ...]]:
    """The top k of m iid draws with scaled CDF *cdf* on [0, top], within
    :func:`total_variation_bound` of the exact law (see the module docstring)."""
    values: list[int] = []
    remaining, v_hi = m, top
    while len(values) < k and v_hi > 0:
        v = yield Bits(bits, partial(_largest, cdf, v_hi, remaining))
        if v == 0:
            break
        below = cdf(v - 1)
        missing = k - len(values)
        if below == 0:  # every remaining draw ≤ v equals v
            ties = remaining
        else:
            thresholds = _TieThresholds(cdf(v), below, remaining, missing)
            ties = yield Bits(bits, partial(_ties, thresholds))
        values += [v] * min(ties, missing)
        remaining -= ties
        v_hi = v - 1
    return tuple(values + [0] * (k - len(values)))


def _below(u: Prefix, bounds: Callable[[int], tuple[int, int]]) -> bool:
    """Whether U < C for U in the cell [u, u+1)/2^b, given rigorous bounds(p) = (lo, hi) with
    lo ≤ C·2^p ≤ hi. Reads u's bits only as far as the precision p; decides "U ≥ C" once the
    bounds are narrower than half a cell and still meet it."""
    precision = _FIRST_PRECISION
    while True:
        lo, hi = bounds(precision)
        seen = min(precision, u.bits)
        cell = u.top(seen)
        if (cell + 1) << precision <= lo << seen:
            return True
        if cell << precision >= hi << seen:
            return False
        if seen == u.bits and (hi - lo) << (u.bits + 1) <= 1 << precision:
            return False
        precision *= 4


def _power_bounds(num: int, den: int, exponent: int, precision: int) -> tuple[int, int]:
    """(lo, hi) with lo ≤ (num/den)^exponent · 2^precision ≤ hi, for 0 ≤ num ≤ den, by
    square-and-multiply in fixed point rounded down (lo) and up (hi)."""
    if num == den or exponent == 0:
        return 1 << precision, 1 << precision
    if num == 0:
        return 0, 0
    num, den = mpz(num), mpz(den)  # GMP: CPython's int division is quadratic at these sizes
    guard = exponent.bit_length() + 8
    work = precision + guard
    one = 1 << work
    x_lo = (num << work) // den
    x_hi = ceil_div(num << work, den)
    lo = hi = one
    for bit in bin(exponent)[2:]:
        lo = (lo * lo) >> work
        hi = min(one, ceil_div(hi * hi, one))
        if bit == "1":
            lo = (lo * x_lo) >> work
            hi = min(one, ceil_div(hi * x_hi, one))
    return lo >> guard, ceil_div(hi, 1 << guard)


def _largest(cdf: Cdf, v_hi: int, remaining: int, u: Prefix) -> int:
    """Step 1: the smallest w ≤ v_hi with U < G(w) = (F(w)/F(v_hi))^remaining."""
    total = cdf(v_hi)
    lo, hi = 0, v_hi
    while lo < hi:
        mid = (lo + hi) // 2
        bounds = partial(_power_bounds, cdf(mid), total, remaining)
        if _below(u, bounds):
            hi = mid
        else:
            lo = mid + 1
    return lo


class _TieThresholds:
    """Rigorous bounds on C_j = Pr[1 ≤ N ≤ j]/Pr[N ≥ 1] for N ~ Bin(R, p), p = (F(v) − F(v−1))/F(v).

    Pr[N = 0] = (F(v−1)/F(v))^R and Pr[N = i+1] = Pr[N = i]·(R − i)/(i + 1)·(F(v) − F(v−1))/F(v−1).
    Every product is rounded down in the lower chain and up in the upper one; the chains are
    kept per precision and extended on demand.
    """

    def __init__(self, at: int, below: int, remaining: int, missing: int) -> None:
        self.at, self.below, self.remaining, self.missing = at, below, remaining, missing
        self._chains: dict[int, _Chain] = {}

    def bounds(self, j: int, precision: int) -> tuple[int, int]:
        work = precision + self.remaining.bit_length() + self.missing.bit_length() + 16
        chain = self._chains.get(work)
        if chain is None:
            zero = _power_bounds(self.below, self.at, self.remaining, work)
            step = mpz(self.at - self.below)  # the ratio p/(1−p) = step/below, rounded both ways
            ratio = (step << work) // self.below, ceil_div(step << work, self.below)
            chain = self._chains[work] = _Chain(zero, ratio)
        while len(chain.sums) < j:
            i = len(chain.sums)  # from Pr[N = i] to Pr[N = i + 1]
            factor = self.remaining - i
            term_lo = (chain.term[0] * chain.ratio[0] * factor // (i + 1)) >> work
            term_hi = ceil_div(ceil_div(chain.term[1] * chain.ratio[1] * factor, i + 1), 1 << work)
            chain.term = term_lo, term_hi
            sum_lo, sum_hi = chain.sums[-1] if chain.sums else (0, 0)
            chain.sums.append((sum_lo + term_lo, sum_hi + term_hi))
        sum_lo, sum_hi = chain.sums[j - 1]
        zero_lo, zero_hi = chain.zero
        one = 1 << work
        lo = (sum_lo << work) // (one - zero_lo)
        hi = one if zero_hi >= one else min(one, ceil_div(sum_hi << work, one - zero_hi))
        shift = work - precision
        return lo >> shift, ceil_div(hi, 1 << shift)


class _Chain:
    """Bounds on Pr[N = 0], on p/(1−p), on the last term Pr[N = i] and on the partial sums
    Σ_{1..i}, at one precision."""

    def __init__(self, zero: tuple[int, int], ratio: tuple[int, int]) -> None:
        self.zero, self.ratio = zero, ratio
        self.term = zero
        self.sums: list[tuple[int, int]] = []


def _ties(thresholds: _TieThresholds, u: Prefix) -> int:
    """Step 2: the smallest j < k′ with U < C_j, else k′ (N ≥ k′, clamped)."""
    for j in range(1, thresholds.missing):
        if _below(u, partial(thresholds.bounds, j)):
            return j
    return thresholds.missing
