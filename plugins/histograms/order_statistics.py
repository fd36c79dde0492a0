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
lo ≤ C·2^p ≤ hi, rounded down and up at every step (so they are rigorous; for the C_j, by MPFR
chains rounding down and up, :class:`_TieThresholds`), are computed at p = 64, 256, 1024, …
bits. The decision is taken as soon as the cell lies wholly below or above
[lo, hi]·2^{−p}; if instead the interval has shrunk below half a cell first, the decision is
"U ≥ C". Couple this with the exact inverse CDF on a continuous U in the same cell: they differ
only if the cell meets an interval of width ≤ 2^{−b−1} around some threshold, which has
probability at most 2·2^{−b} per threshold. Step 1 has at most top + 1 thresholds and step 2 at
most k; there are at most k jumps. So

    TV(approximate, exact) ≤ 2·k·(top + 1 + k)·2^{−b}            (:func:`total_variation_bound`)

and :func:`bits_for` picks the smallest b making this at most a target δ, a power of 2. The interval
widths go to 0 as p grows, so every decision ends; the number of decisions is at most
k·(log₂(top+1) + 2), independent of the data.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from math import comb
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq, mpz

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


def bits_for(top: int, k: int, delta_bits: int) -> int:
    """The smallest b with :func:`total_variation_bound` ≤ δ = 2^{−delta_bits}."""
    return delta_bits + max(0, ceil_log2(mpq(2 * k * (top + 1 + k))))


def approximate_order_statistics(
    cdf: Cdf, top: int, m: int, k: int, bits: int
) -> Program[tuple[int, ...]]:
    """The top k of m iid draws with scaled CDF *cdf* on [0, top], within
    :func:`total_variation_bound` of the exact law (see the module docstring)."""
    values: list[int] = []
    remaining, v_hi = m, top
    while len(values) < k and v_hi > 0:
        v = yield Bits(
            bits, partial(_largest, cdf, v_hi, remaining), (_largest, cdf, v_hi, remaining)
        )
        if v == 0:
            break
        below = cdf(v - 1)
        missing = k - len(values)
        if below == 0:  # every remaining draw ≤ v equals v
            ties = remaining
        else:
            thresholds = _TieThresholds(cdf(v), below, remaining, missing)
            ties = yield Bits(
                bits, partial(_ties, thresholds), (_ties, cdf(v), below, remaining, missing)
            )
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
    Both chains run in MPFR at a working precision a little above the requested one, the lower
    one rounding every operation down and the upper one up (gmpy2 contexts), so each is
    rigorous. Pr[N = 0] can be as small as e^{−|X|}, far below MPFR's exponent range (about
    2^{−2^30}), so every value of a chain is kept as an MPFR number times a shared power of two
    2^E with E a Python integer (:class:`_Chain`). A chain advances with j, one step per j, so
    the cost of a tie count N is O(N) operations on numbers of the working precision.
    """

    def __init__(self, at: int, below: int, remaining: int, missing: int) -> None:
        self.at, self.below, self.remaining, self.missing = at, below, remaining, missing
        self._chains: dict[tuple[int, bool], _Chain] = {}

    def bounds(self, j: int, precision: int) -> tuple[int, int]:
        lower, upper = (self._chain(j, precision, up) for up in (False, True))
        return lower.fixed(precision), upper.fixed(precision)

    def _chain(self, j: int, precision: int, up: bool) -> _Chain:
        work = precision + self.missing.bit_length() + 16
        chain = self._chains.get((work, up))
        if chain is None or chain.j > j:
            chain = self._chains[work, up] = _Chain(self, work, up)
        chain.advance(j)
        return chain


#: MPFR exponents are kept within ±2^_RESCALE_BITS; the rest goes into a chain's shared 2^E.
_RESCALE_BITS = 1 << 20


class _Chain:
    """C_j rounded one way (down: ``up`` False; up: True) at one working precision.

    Values are m·2^E: ``term`` = Pr[N = j], ``total`` = Σ_{1..j} Pr[N = i], sharing the exponent
    E (``scale``); ``zero`` = Pr[N = 0] as (m, e). Rescaling multiplies by a power of two, which
    is exact unless it underflows, and an underflow rounds the way of the chain (to 0 when
    rounding down, to the smallest positive number when rounding up), so the bounds stay
    rigorous.
    """

    def __init__(self, thresholds: _TieThresholds, work: int, up: bool) -> None:
        self.remaining = thresholds.remaining
        self.up = up
        self.context = _context(work, up)
        with self.context:
            self.zero = _power_scaled(thresholds.below, thresholds.at, thresholds.remaining)
            self.ratio = mpfr(thresholds.at - thresholds.below) / thresholds.below
            # 1 − Pr[N = 0], rounded the other way, so that total / rest is rounded this way.
            with _context(work, not up):
                self.rest = 1 - _unscaled(self.zero, up)
        self.term, self.scale = self.zero
        self.total = mpfr(0)
        self.j = 0

    def advance(self, j: int) -> None:
        """Extend the chain to Pr[N = j] and Σ_{1..j}."""
        if self.j == j:
            return
        with self.context:
            term, total, scale, ratio = self.term, self.total, self.scale, self.ratio
            for i in range(self.j, j):  # from Pr[N = i] to Pr[N = i + 1]
                term = term * ratio * (self.remaining - i) / (i + 1)
                total = total + term
                shift = gmpy2.get_exp(total)
                if not -_RESCALE_BITS <= shift <= _RESCALE_BITS:
                    term, total = gmpy2.mul_2exp(term, -shift), gmpy2.mul_2exp(total, -shift)
                    scale += shift
            self.term, self.total, self.scale, self.j = term, total, scale, j

    def fixed(self, precision: int) -> int:
        """⌊C_j·2^precision⌋ (rounding down) or ⌈C_j·2^precision⌉ (up), within [0, 2^precision],
        shifted exactly in integers (C_j·2^precision may lie outside MPFR's exponent range)."""
        one = 1 << precision
        if self.rest <= 0:  # Pr[N = 0] may be 1 as far as this bound knows: C_j ≤ 1
            return one if self.up else 0
        with self.context:
            quotient = self.total / self.rest
        mantissa, exponent = (int(part) for part in quotient.as_mantissa_exp())
        shift = exponent + self.scale + precision
        if shift >= 0:
            return min(mantissa << shift, one)
        return min(-(-mantissa >> -shift) if self.up else mantissa >> -shift, one)


def _context(precision: int, up: bool) -> Any:
    """A gmpy2 context rounding every operation up or down, with MPFR's widest exponents."""
    return gmpy2.context(
        precision=precision,
        round=gmpy2.RoundUp if up else gmpy2.RoundDown,
        emin=gmpy2.get_emin_min(),
        emax=gmpy2.get_emax_max(),
    )


def _power_scaled(num: int, den: int, exponent: int) -> tuple[Any, int]:
    """(num/den)^exponent as (m, e) with value m·2^e, rounded the active context's way, for
    0 < num ≤ den: 2^z with z = exponent·log₂(num/den) split into ⌊z⌋ and the fraction (exact)."""
    # num/den ≤ 1, but num and den may be longer than the precision: rounded up, the quotient
    # can pass 1, and 1 is then the tighter (still rigorous) upper bound
    z = gmpy2.log2(min(mpfr(num) / den, mpfr(1))) * exponent
    whole = gmpy2.floor(z)
    return gmpy2.exp2(z - whole), int(whole)


def _unscaled(value: tuple[Any, int], up: bool) -> Any:
    """m·2^e as an MPFR number of the active context: exact within MPFR's exponent range;
    below it, 0 (down) or the smallest positive number (up), either way still a bound."""
    mantissa, exponent = value
    floor = -(1 << 29)
    if exponent < floor:
        return gmpy2.mul_2exp(mantissa, floor) if up else mpfr(0)
    return gmpy2.mul_2exp(mantissa, exponent)


def _ties(thresholds: _TieThresholds, u: Prefix) -> int:
    """Step 2: the smallest j < k′ with U < C_j, else k′ (N ≥ k′, clamped)."""
    for j in range(1, thresholds.missing):
        if _below(u, partial(thresholds.bounds, j)):
            return j
    return thresholds.missing
