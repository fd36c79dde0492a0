"""CompactHistogram_{M,M₀} (Balcer & Vadhan, full version Lemma 8.1, Alg. 8.2, Thm 8.3,
Lemma 8.4, Thm 8.6; ITCS version Lemma 7.1, Alg. 9, Thm 7.2, Cor. 7.3;
docs/mechanisms.md#compact-histogram): a dense histogram over a huge universe, released as n + 1
field elements, with the per-query error of the basic histogram.

**Field.** F = F_P for a proven prime P ≥ max(|X|, (R+1)/((R−1)·p_min)) (:mod:`.prime_field`), with
p_min the smallest positive probability of M(0, U), instead of the paper's GF(2^{2·3^ℓ}) of size
≥ (q₀+1)·d. Nothing in the proof uses characteristic 2:

- *(n+1)-wise independence.* Label x has the field element x (its index; P ≥ |X| keeps them
  distinct). For distinct x_0 … x_n the map from the n+1 coefficients of p (degree ≤ n) to
  (p(x_0), …, p(x_n)) is the Vandermonde matrix, invertible over any field, so a uniform p has
  uniform, independent values at any n+1 labels. Fixing p(x) for x ∈ A (|A| ≤ n) leaves the
  values at any other n+1−|A| labels uniform and independent.
- *M₀ ratio bounds.* M₀ rounds the scaled CDF of M(0, U) down onto the P points
  (:class:`~dpplug.kinds.histogram_releaser.outputs.EmptyBinLaw`), so Pr[M₀ = v] is within 1/P of
  Pr[M(0, U) = v]: with p ≤ every positive Pr[M(0, U) = v] and P·p ≥ (R+1)/(R−1), the two ratio
  bounds e^{ε₂}, e^{ε₃} multiply to at most (P·p + 1)/(P·p − 1) ≤ R. p is the smallest such
  probability, found in one pass over [0, n] (or 1/d past a scan budget), so the field needs about
  log₂(1/p) bits where Lemma 8.4's map needs log₂ d: for FastSample (γ = β/(2|X|)) about 90 bits
  instead of 700, so interpolation and evaluation run on two-word numbers.

**Release (Alg. 8.2).** Noisy counts c̃_x = M(c_x, U) for the nonempty bins A; for each, u_x
uniform in S_{c̃_x} (so M₀(u_x) = c̃_x) and the point (x, u_x − 1); the smallest n+1−|A| other
labels get uniform field values (the choice of B does not matter); the polynomial through these
n+1 points is uniform among those with p(x) = u_x − 1 on A. Interpolation is fast (subproduct
tree). The coefficients are released; :class:`~dpplug.CompactHistogram` evaluates them.

**Privacy (Thm 8.3).** M is e^{ε₁/2}-DP for one count (L = e^{ε₁/2}) and M₀ is within
e^{ε₂}, e^{ε₃} of M(0, U) with e^{ε₂+ε₃} ≤ (P·p + 1)/(P·p − 1). The release is e^ε-DP for
replacing one row with e^ε = L²·(P·p + 1)/(P·p − 1), an exact rational. Cor. 7.3 gives the
sampler 9/10 of ε and M₀ the rest through R = (q₀+1)/q₀, q₀ = ⌈10/ε⌉; but when |X| rather than
p sets P, P·p is far above (R+1)/(R−1), M₀'s ratio is close to 1 and its share is lost (ε = 1
over |X| = 2^32 achieved 0.89), and for ε > 10 the integer q₀ = 1 caps it at ln 2. So here the
sampler gets 39/40 of ε (39/80 per count) and R is a rational lower bound on e^{ε/40}
(:func:`~dpplug.exact.exp_lower`; (q₀+1)/q₀ with q₀ = :data:`FIXED_GUARANTEE_Q` for a sampler
with a fixed guarantee): e^ε ≤ e^{(39/40)ε}·e^{ε/40}, and the achieved ε is at least 39/40 of what
the sampler achieves of its share (at least 95% of the request for the built-in samplers, which
achieve at least 63/64; tests). P grows by two bits over Cor. 7.3's. For FastSample
γ = β/(2|X|).

**Cost.** The release interpolates n + 1 points (subproduct tree, reused for the derivative's
values) and keeps n + 1 coefficients: time O(M(n) log n) and memory O(n log n) field elements,
so n is at most :data:`MAX_N`.

**Accuracy.** Per query (a, β) with a the larger of the sampler's a at β and the smallest a with
Pr[M₀(U₀) > a] ≤ β (exact, from the S_v intervals). All labels at once (union bound; values at
different labels need not be independent): every label's M₀ tail once, and what a nonempty bin's
two-sided error adds to it against the n rows (:func:`~.error_bounds.dense_simultaneous`),
where Thm 8.3 takes the larger a at β/|X| for every label.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter, PluginFault
from dpplug.exact import ceil_log2, exp_lower, smallest_error_bound
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler, HistogramReleaser, TrueCounts
from dpplug.kinds.histogram_releaser.compact_law import CompactField
from dpplug.kinds.histogram_releaser.outputs import CompactHistogram, EmptyBinLaw
from dpplug.param_text import params_text
from dpplug.params import Schema
from dpplug.plugins.histograms.error_bounds import dense_simultaneous
from dpplug.plugins.histograms.prime_field import interpolate, polynomial_ring, proth_prime_at_least
from dpplug.plugins.histograms.sampler_choice import (
    REPLACE_ONE,
    build_sampler,
    releaser_params,
    require_bounded,
)
from dpplug.program import noise
from dpplug.randomness import RandomSource

#: The empty-bin law's share of ε (the sampler gets the rest, half of it per count).
EMPTY_SHARE = mpq(1, 40)
#: For a sampler with a fixed guarantee (no ε to share), M₀'s ratio bound is (q+1)/q with this q.
FIXED_GUARANTEE_Q = 1000
#: The largest n: a release holds a subproduct tree of n log₂ n field elements.
MAX_N = 1 << 20
#: :func:`smallest_probability` scans M(0, U) when (n + 1)·max(log₂ d, 1024) is at most this.
SCAN_BITS = 1 << 28


def smallest_probability(sampler: CountingQuerySampler, enough: Any) -> Any:
    """A lower bound p on every positive Pr[M(0, U) = v]: 1/d (every probability of M(0, U) is
    a multiple of 1/d) when that is already at least *enough* or a pass over [0, n] would read
    more than :data:`SCAN_BITS` bits of scaled CDF (counting at least 1024 per value), else the
    smallest one, found in that pass."""
    d, n = int(sampler.d or 0), sampler.count_bounds[1]
    if mpq(1, d) >= enough or (n + 1) * max(d.bit_length(), 1024) > SCAN_BITS:
        return mpq(1, d)
    smallest, previous = d, 0
    for v in range(n + 1):
        cdf = d if v == n else int(sampler.scaled_cdf(v, 0))
        if cdf > previous:
            smallest = min(smallest, cdf - previous)
        previous = cdf
    return mpq(smallest, d)


class CompactHistogramReleaser(HistogramReleaser):
    name = "compact-histogram"
    summary = "A dense histogram over a huge universe as n+1 field elements (pure DP)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 8.2 / Thm 8.3"
    schema = Schema(
        releaser_params(
            "fastsample",
            max_n=MAX_N,
            beyond=(
                "a release interpolates n + 1 field elements and holds n·log₂ n of them; for "
                "more rows use stability-histogram (approximate DP, cost linear in the data)"
            ),
        )
    )
    conformance_cases = (
        {"universe": "range:0:3", "n": 2, "epsilon": 2, "sampler": "geosample"},
        {"universe": "text:2", "n": 3, "epsilon": 1},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = n = self.params["n"]
        size = self.universe.size
        if size < n + 1:
            raise BadParameter(
                f"compact-histogram needs |X| ≥ n + 1, but |X| = {size} and n = {n}; declare a "
                f"larger universe or use basic-histogram"
            )
        beta = self.params["beta"]
        self.sampler = build_sampler(
            self.name,
            self.params,
            self.registry_in_use(),
            epsilon_share=(1 - EMPTY_SHARE) / 2,
            gamma=(beta / (2 * size), "β/(2|X|)"),
        )
        require_bounded(self.name, self.sampler, n)
        epsilon = self.params["epsilon"]
        #: R ≤ e^{ε/40}: the bound on M₀'s ratios (module docstring).
        self.ratio_bound = (
            mpq(FIXED_GUARANTEE_Q + 1, FIXED_GUARANTEE_Q)
            if epsilon is None
            else exp_lower(epsilon * EMPTY_SHARE, 64 + ceil_log2(1 / (epsilon * EMPTY_SHARE)))
        )
        spread = (self.ratio_bound + 1) / (self.ratio_bound - 1)  # P·p ≥ this
        # P ≥ |X| in any case: scanning M(0, U) only pays if p = 1/d would need a larger field.
        #: p ≤ every positive Pr[M(0, U) = v] (module docstring).
        self.smallest = smallest_probability(self.sampler, spread / size)
        grid = spread / self.smallest
        self.modulus = proth_prime_at_least(int(max(size, -(-grid // 1))))
        self.law = EmptyBinLaw(self.sampler, self.modulus)
        #: e^{ε₂}·e^{ε₃} of Thm 8.3, at most (P·p + 1)/(P·p − 1) ≤ R (EmptyBinLaw).
        self.empty_ratio = (self.modulus * self.smallest + 1) / (self.modulus * self.smallest - 1)
        self.derived = {
            "sampler": repr(self.sampler),
            "modulus_bits": self.modulus.bit_length(),
            "empty_ratio": self.empty_ratio,
        }

    @property
    def guarantee(self) -> Guarantee:
        exp_epsilon = self.sampler.guarantee.exp_epsilon**2 * self.empty_ratio
        return Guarantee(exp_epsilon, 0, REPLACE_ONE)

    def _empty_a(self, beta: Any) -> int:
        """The smallest a with Pr[M₀(U₀) > a] ≤ β, exactly from the S_v intervals."""
        modulus, law = self.modulus, self.law
        return smallest_error_bound(
            lambda a: mpq(modulus - law.threshold(a), modulus), beta, cap=self.n
        )

    def _accuracy(self, beta: Any) -> Accuracy:
        size = self.universe.size
        per_query = max(self.sampler.accuracy(beta).per_query.a, self._empty_a(beta))
        modulus, law = self.modulus, self.law
        everywhere = dense_simultaneous(
            self.sampler, size, self.n, beta, lambda a: 1 - mpq(law.threshold(a), modulus)
        )
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(everywhere, beta),
            formula=(
                "max(sampler's a, smallest a with Pr[M₀ > a] ≤ β); for all labels the smallest a "
                "with |X|·Pr[M₀ > a] + n·max_c (f(c, a) − Pr[M₀ > a])/c ≤ β (union bound)"
            ),
        )

    def exact_structure(self) -> CompactField:
        """Alg. 8.2's components over this field (the compact law's structure)."""
        return CompactField(self.sampler, self.law)

    def _release(self, counts: TrueCounts, source: RandomSource) -> CompactHistogram:
        noisy = noise(self.sampler, counts.counts, source)
        xs, ys = list(counts.indices), []
        for value in noisy:
            first, width = self.law.interval(int(value))
            if width <= 0:
                raise PluginFault(
                    f"{self.sampler.name} gives count {value} probability 0 at true count 0, "
                    f"so it cannot be pure DP; report it to the plugin's authors"
                )
            ys.append(first + source.uniform(width) - 2)
        taken, candidate = set(xs), 0
        while len(xs) < self.n + 1:
            if candidate not in taken:
                xs.append(candidate)
                ys.append(source.uniform(self.modulus) - 1)
            candidate += 1
        ring = polynomial_ring(self.modulus)
        polynomial = interpolate(ring, xs, ys)
        coefficients = [int(c) for c in polynomial.coeffs()]
        coefficients += [0] * (self.n + 1 - len(coefficients))
        return CompactHistogram(
            self.universe,
            self.modulus,
            tuple(coefficients),
            self.sampler,
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
            self.name,
            params_text(self.params),
        )
