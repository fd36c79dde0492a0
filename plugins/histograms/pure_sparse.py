"""PureSparseHistogram_{M,ε,β₂} (Balcer & Vadhan, ITCS version Alg. 8, Thm 6.6, Fig. 2; full
version Alg. 6.9, Thm 6.10–6.11; docs/mechanisms.md#pure-sparse-histogram): a sparse histogram
over a huge universe with pure DP.

1. With probability 1 − β₂ release M′(D) = KH′ (:mod:`.keep_heavy`) with the approximate order
   statistics of :mod:`.order_statistics`, whose output law is within δ in total variation of
   KeepHeavy's (KH′ with exact order statistics *is* KeepHeavy).
2. Otherwise release a random histogram: x_1 … x_n iid uniform in X, each distinct one gets a
   count uniform in [0, n] (0 included), and the bins with a positive count are released.

Both outputs are in canonical order.

**Privacy (mixing, full version Lemma 3.2).** KeepHeavy is e^ε-DP with e^ε = L², L the sampler's
exact per-count bound. Its outputs lie in R = H_{n,n}(X) (at most n bins, counts in [1, n]), and
step 2 gives every h ∈ R probability at least

    p_min = n! / ((n+1)^n · |X|^n):

for h with k ≥ 1 bins S, the first k draws can be S in any of k! orders and the other n − k
draws can fall in S, and each bin of S must then get its count: at least
k!/((n+1)^k·|X|^n), which decreases in k; the empty histogram has at least (n+1)^{−n}, which is
larger since n! ≤ |X|^n. (The paper's (6|X|)^{−n} is smaller.) The mixture is then pure e^ε-DP
whenever δ ≤ ((e^ε − 1)/(e^ε + 1)) · (β₂/(1 − β₂)) · p_min. That bound has about n·log₂(n|X|)
bits, so it is never written out: δ = 2^{−k} with k the ceiling of an upper bound on its −log₂,
computed with MPFR rounding up (log₂ n! from lgamma rounding down), so δ is a valid, slightly
smaller mixing δ (:func:`mixing_delta_bits`; checked against the exact condition in the tests).

**Accuracy**, tighter than Thm 6.6. Every failure event has probability at most
β₂ + (1 − β₂)(p_KH + δ), with p_KH its probability under KeepHeavy (the random histogram fails
at will; KH′ is within δ of KeepHeavy), so KeepHeavy gets β_KH = (β − β₂)/(1 − β₂) − δ. In
KeepHeavy a bin x of true count c that is not released has c̃_x at most the (n+1)-th largest
noisy count, so at least n other bins are at or above c̃_x; at most n − c of them are nonempty
(they hold at most n − c rows), so c̃_x ≤ V_{c−1}, the c-th largest noisy count of the (at most
|X|) empty bins. With λ(w) = |X|·Pr[M(0, U) ≥ w], Pr[V_{k−1} ≥ w] ≤ min(λ(w)^k/k!,
e^{k−λ}(λ/k)^k) (k of the empty bins at or above w; the second, Chernoff's, for λ < k), decided
rigorously in MPFR (:func:`~.error_bounds.order_statistic_below`).

- Per query: a bin of count c > T misses by more than a₁ (the sampler's a at (15/16)β_KH) only
  if, for any offset j ≤ a₁, |c̃_x − c| > j (probability at most τ(j), the sampler's declared
  two-sided tail at j, for every count) or it is dropped with c̃_x ≥ c − j ≥ w = T + 1 − j. Then
  at least n other bins are at or above w: empty bins, each independently with probability
  Pr[M(0, U) ≥ w] (expected number at most λ(w)), and nonempty ones, which hold at most
  n − T − 1 rows, each of c_y rows independently with probability Pr[M(c_y, U) ≥ w] (expected
  number at most μ(w) = (n − T − 1)·max_{c′ ≥ 1} Pr[M(c′, U) ≥ w]/c′, a fractional knapsack).
  Their number is a sum of independent indicators of mean at most λ + μ, so Pr[it reaches n]
  is bounded as V's above, with λ + μ for λ. T is the least, over j, of the smallest T with
  that bound at most β_KH − τ(j); the bound then holds for every c > T.
- All bins: an empty bin is released only at most M = V_0, and a nonempty bin of count c > A
  that is dropped has c̃_x ≤ V_{c−1} ≤ V_A. So a release fails only if M > A (|X|·Pr[M(0, U)
  > A] ≤ 3β_KH/4), V_A exceeds a cut v (the bound at v + 1 ≤ β_KH/8), or a bin fails with
  cut v (:func:`~.error_bounds.dropping_simultaneous` at β_KH/8: the worst dataset has about
  n/A bins of count just above A).

β₂ = β/6 (rounded down into 1/ℕ) as in Fig. 2. For FastSample, γ = β/(64|X|) where Fig. 2 has
β/(4|X|): each empty bin draws a uniform count in [0, n] with probability γ, so the |X| empty
bins put a uniform count near n with probability up to |X|·γ, which with Fig. 2's γ (β/4)
would push the threshold close to n; the smaller γ costs four bits of d.

**Cost.** Linear in n: KH′ draws n + 1 labels and n + 1 order statistics whatever the data, so
n is at most :data:`MAX_N` (the message names the alternatives).
"""

from __future__ import annotations

from functools import cached_property, lru_cache, partial
from typing import Any

import gmpy2
from gmpy2 import mpfr, mpq

from dpplug.errors import BadParameter
from dpplug.exact import smallest_at_least
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import HistogramReleaser, TrueCounts
from dpplug.kinds.histogram_releaser.outputs import SparseHistogram
from dpplug.params import Schema, unit_fraction
from dpplug.plugins.histograms.coverage import warn_if_uncovered
from dpplug.plugins.histograms.error_bounds import (
    dropping_simultaneous,
    empty_maximum_quantile,
    empty_rate,
    largest_tail,
    order_statistic_below,
)
from dpplug.plugins.histograms.keep_heavy import Released, kh_prime
from dpplug.plugins.histograms.order_statistics import approximate_order_statistics, bits_for
from dpplug.plugins.histograms.sampler_choice import (
    REPLACE_ONE,
    build_sampler,
    releaser_params,
    require_bounded,
)
from dpplug.program import Categorical, Program, Uniform, run
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

#: The largest n: a release draws n + 1 labels and order statistics (seconds per 10^5 rows).
MAX_N = 1 << 20
#: The per-query threshold tries at most this many offsets j below a₁ (each moves T by about
#: one, and the first one or two carry the gain).
_OFFSETS = 8
#: Counts read exactly by the competitors' bound :func:`_reach_per_row`.
_REACH_SCAN = 256
#: Working precision of :func:`mixing_delta_bits` (its terms are below 2^51).
_LOG_PRECISION = 128
#: δ enters the accuracy through an upper bound 2^{−min(k, this)}.
_DELTA_BITS_SHOWN = 1024


def mixing_delta_bits(exp_epsilon: Any, beta2: Any, n: int, size: int) -> int:
    """The k of δ = 2^{−k} ≤ ((L − 1)/(L + 1))·(β₂/(1 − β₂))·n!/((n+1)^n·|X|^n): the ceiling of
    an upper bound on −log₂ of the right-hand side, each term rounded up (MPFR) and log₂ n!
    rounded down."""
    with gmpy2.context(precision=_LOG_PRECISION, round=gmpy2.RoundUp):
        ln2_up = gmpy2.const_log2()
    with gmpy2.context(precision=_LOG_PRECISION, round=gmpy2.RoundDown):
        log2_factorial = gmpy2.lgamma(mpfr(n + 1))[0] / ln2_up
    with gmpy2.context(precision=_LOG_PRECISION, round=gmpy2.RoundUp):
        ratio = mpq(exp_epsilon + 1) / (exp_epsilon - 1)
        bound = gmpy2.log2(mpfr(ratio)) + gmpy2.log2(mpfr(1 / beta2 - 1))
        bound += n * gmpy2.log2(mpfr(n + 1)) + n * gmpy2.log2(mpfr(size)) - log2_factorial
        return int(gmpy2.ceil(bound))


def random_histogram(size: int, n: int) -> Program[Released]:
    """Step 2: n iid uniform labels, a uniform count in [0, n] for each distinct one."""
    labels = set()
    for _ in range(n):
        labels.add((yield Uniform(size)) - 1)
    released = []
    for label in sorted(labels):
        count = (yield Uniform(n + 1)) - 1
        if count > 0:
            released.append((label, count))
    return tuple(released)


class PureSparseHistogramReleaser(HistogramReleaser):
    name = "pure-sparse-histogram"
    summary = "At most n noisy bins over a huge universe, pure DP (KH′ mixed with a random one)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 6.9 / Thm 6.10"
    schema = Schema(
        releaser_params(
            "fastsample",
            max_n=MAX_N,
            beyond=(
                "a release draws n + 1 labels and order statistics, about a second per 10^4 "
                "rows; for more rows use stability-histogram (approximate DP, cost linear in "
                "the data) or basic-histogram on a smaller universe"
            ),
        )
    )
    conformance_cases = (
        {"universe": "range:0:7", "n": 2, "epsilon": 2, "sampler": "geosample"},
        {"universe": "range:0:7", "n": 2, "epsilon": 1},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = n = self.params["n"]
        size = self.universe.size
        if size < 4 * n:
            raise BadParameter(
                f"pure-sparse-histogram needs |X| ≥ 4n (Balcer–Vadhan Thm 6.10), but |X| = "
                f"{size} and n = {n}; declare a larger universe or use basic-histogram"
            )
        beta = self.params["beta"]
        plugins = self.registry_in_use()
        gamma = (beta / (64 * size), "β/(64|X|)")
        self.sampler = build_sampler(self.name, self.params, plugins, gamma=gamma)
        require_bounded(self.name, self.sampler, n)
        self.beta2 = unit_fraction(beta / 6)
        exp_epsilon = self.sampler.guarantee.exp_epsilon**2
        #: δ = 2^{−delta_bits}, the mixing δ (module docstring).
        self.delta_bits = mixing_delta_bits(exp_epsilon, self.beta2, n, size)
        self.bits = bits_for(n, n + 1, self.delta_bits)
        #: F(v) of an empty bin's noise, one cache per releaser (and one key of its Bits draws).
        self._empty_cdf = lru_cache(maxsize=None)(partial(_empty_cdf, self.sampler))
        #: max_c Pr[M(c, U) ≥ w]/c by w, for the per-query threshold's search.
        self._reach = lru_cache(maxsize=None)(partial(_reach_per_row, self.sampler, n))
        #: Step 1 or 2: the random histogram (True) with probability β₂, drawn first by every
        #: release (made once: an exact law replays the program for each of its paths).
        self._mixing = Categorical({True: self.beta2, False: 1 - self.beta2})
        self.derived = {
            "sampler": repr(self.sampler),
            "beta2": self.beta2,
            "delta_bits": self.delta_bits,
            "precision_bits": self.bits,
        }
        warn_if_uncovered(self)

    @cached_property
    def guarantee(self) -> Guarantee:
        """e^{2ε} of the sampler's e^ε (kept: every enumerated run of a release carries it)."""
        return Guarantee(self.sampler.guarantee.exp_epsilon**2, 0, REPLACE_ONE)

    def _keep_heavy_beta(self, beta: Any) -> Any:
        """β_KH = (β − β₂)/(1 − β₂) − δ (module docstring), with δ ≤ 2^{−min(k, 1024)}."""
        delta = mpq(1, 1 << min(self.delta_bits, _DELTA_BITS_SHOWN))
        spare = (beta - self.beta2) / (1 - self.beta2) - delta
        if spare <= 0:
            raise BadParameter(
                f"pure-sparse-histogram cannot promise β = {beta}: it releases a random "
                f"histogram with probability β₂ = {self.beta2}; ask for a larger β or build it "
                f"with a smaller beta"
            )
        return spare

    def per_query_bound(self, beta: Any) -> tuple[int, int]:
        """(a₁, T): the per-query a and the count above which it holds (module docstring): the
        least T over the offsets j ≤ a₁ whose two-sided tail τ(j) leaves room for the dropping
        bound at w = T + 1 − j."""
        spare = self._keep_heavy_beta(beta)
        a = self.sampler.accuracy(spare * mpq(15, 16)).per_query.a
        # Thresholds of n or more cover no count; they are still computed (up to n + a, where
        # no empty bin reaches w), so that the coverage warning can tell how far off n is.
        best = self.n + a
        for offset in range(a, max(-1, a - _OFFSETS), -1):
            dropping = spare - largest_tail(self.sampler, offset, spare / (1 << 20))
            covers = partial(self._covers, offset=offset, beta=dropping)
            if dropping <= 0 or not covers(best - 1):
                break  # a smaller offset leaves less room: T only grows from here
            best = _smallest_below(covers, offset, best - 1)
        return a, best

    def _covers(self, threshold: int, *, offset: int, beta: Any) -> bool:
        """Whether every count c > *threshold* has Pr[dropped while c̃ ≥ c − offset] ≤ β: at
        least n of the other bins reach w = threshold + 1 − offset, whose expected number is at
        most λ(w) + μ(w) (module docstring)."""
        w, others = threshold + 1 - offset, max(0, self.n - threshold - 1)
        return order_statistic_below(self._rate(w) + others * self._reach(w), self.n, beta)

    def _rate(self, w: int) -> Any:
        return empty_rate(self.sampler, self.universe.size, w)

    def _cut_holds(self, a: int, beta: Any, v: int) -> bool:
        """Pr[V_a > v] ≤ β: the (a+1)-th largest empty bin is at most v."""
        return order_statistic_below(self._rate(v + 1), a + 1, beta)

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query, threshold = self.per_query_bound(beta)
        spare = self._keep_heavy_beta(beta)
        size, n = self.universe.size, self.n
        everywhere = empty_maximum_quantile(self.sampler, size, spare * mpq(3, 4))
        for _ in range(2):  # the cut only falls as a grows, so the second pass confirms
            cut = smallest_at_least(partial(self._cut_holds, everywhere, spare / 8), 0, n, True)
            dropped = dropping_simultaneous(self.sampler, n, cut, spare / 8)
            if dropped is None:  # past the scan budget: every nonempty bin within a two-sided a
                dropped = cut + self.sampler.accuracy(spare / 8 / n).per_query.a
            if dropped <= everywhere:
                break
            everywhere = dropped
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(min(everywhere, n), beta),
            threshold=threshold,
            formula=(
                "β_KH = (β − β₂)/(1 − β₂) − δ; a₁ at 15β_KH/16 on counts c with Pr[c-th largest "
                "empty ≥ c − a₁] ≤ β_KH/16; all bins: the largest empty at 3β_KH/4, the (a+1)-th "
                "largest as the cut of the dropped-bin bound, β_KH/8 each"
            ),
        )

    def covered_above(self, beta: Any) -> int:
        """The count above which the per-query bound holds (for :mod:`.coverage`)."""
        return self.per_query_bound(beta)[1]

    def program(self, counts: TrueCounts) -> Program[Released]:
        """The release as a program (sampled by :meth:`release`; its law is computable)."""
        # One U(1/β₂) draw, 1 being the random histogram (Categorical draws exactly that),
        # as two outcomes rather than 1/β₂, so that the law enumerates each branch once.
        if (yield self._mixing):
            return (yield from random_histogram(self.universe.size, self.n))
        order = partial(approximate_order_statistics, self._empty_cdf, self.n, bits=self.bits)
        return (
            yield from kh_prime(
                self.sampler,
                self.universe.size,
                counts.indices,
                [int(c) for c in counts.counts],
                lambda m, k: order(m=m, k=k),
            )
        )

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (the release runs :meth:`program`)."""
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        released = run(partial(self.program, counts), source)
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in released),
            tuple(c for _, c in released),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


def _smallest_below(holds: Any, low: int, high: int) -> int:
    """The smallest t in [low, high] with holds(t), for monotone *holds* with holds(high):
    probes high − 1, high − 3, high − 7, … then bisects, so probes stay near the answer when it
    is near high (each offset moves T by about one)."""
    step, probe = 1, high  # holds(probe)
    while probe > low:
        candidate = max(low, probe - step)
        if not holds(candidate):
            return smallest_at_least(holds, candidate + 1, probe, True)
        probe, step = candidate, 2 * step
    return probe


def _reach_per_row(sampler: Any, n: int, w: int) -> Any:
    """An upper bound on max_{1 ≤ c ≤ n} Pr[M(c, U) ≥ w]/c: 0 for w > n (outputs are at most
    n); else exact from a scan of c that stops where 1/c is below the maximum found (a
    probability is at most 1), or after :data:`_REACH_SCAN` counts, past which 1/c bounds every
    term (the competitors it adds, n/256 at most, are few next to the n a drop needs)."""
    d = int(sampler.d or 0)
    if w > n:
        return mpq(0)
    best, rows = 0, 1  # the maximum so far is best/(d·rows), compared in integers
    for count in range(1, min(n, _REACH_SCAN) + 1):
        if best * count >= d * rows:
            return mpq(best, d * rows)
        reach = d - int(sampler.scaled_cdf(w - 1, count))
        if reach * rows > best * count:
            best, rows = reach, count
    if n > _REACH_SCAN:
        return max(mpq(best, d * rows), mpq(1, _REACH_SCAN + 1))
    return mpq(best, d * rows)


def _empty_cdf(sampler: Any, v: int) -> int:
    return 0 if v < 0 else int(sampler.scaled_cdf(v, 0))
