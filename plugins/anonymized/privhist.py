"""PRIVHIST (Suresh, "Differentially private anonymized histograms", NeurIPS 2019, Algorithms
PRIVHIST, PRIVHIST-LOWPRIVACY and PRIVHIST-HIGHPRIVACY, Thm 1; docs/mechanisms.md#privhist):
a pure ε-DP release of an anonymized histogram and of its number of items, from prevalences,
in time sub-linear in the number of items.

Three noise blocks, composed (the guarantee is the product of their exact e^ε):

1. ε₁: N = max(n + Z^a, 0). If N = 0 the release is (∅, 0). T = ⌈√(N·min(ε, 1))⌉.
2. ε₂: M fake counts are added at T and at T + 1; Z^b moves counts across T | T + 1
   (φ^b_{T+1} = φ_{T+1} + M + Z^b, φ^b_T = φ_T + M − Z^b); the improper histogram is split
   into a small part (counts ≤ T), released as noisy cumulative prevalences φ^{cs}_{r+}, r ≤ T,
   and a large part, released as noisy sorted counts N^{cℓ}_i (their number is part of the
   output). For the same Z^b a neighbour moves one coordinate of the small or large vector by
   one; a count crossing T | T + 1 is absorbed instead by Z^b moved one step, which is not
   released. Either way the block costs one step of G(e^{ε₂}).
3. For ε above ``smoothing_up_to``, PRIVHIST-LOWPRIVACY post-processes block 2: PAVA on the
   small cumulative prevalences (L1), large counts clamped to ≥ T (L2), union (L3), and the 2M
   counts closest to T + 1 and then T removed (L4, ties to the larger count). Block 3 is not
   used, so its share of ε goes to ε₂ (the paper's own suggestion, §4 "Privacy budget
   allocation") and the release spends exactly ε.
   For ε up to ``smoothing_up_to``, PRIVHIST-HIGHPRIVACY spends ε₃ on smoothed prevalences:
   counts ≥ 2N are moved to
   2N (H1); boundaries S (H2); each count is split linearly between its two neighbouring
   boundaries (H3), which makes X_i = (s_i − s_{i−1})·φ^v_{s_i+} an integer moved by at most one,
   in one i, by a neighbour; X_i + G(e^{ε₃}) is the float-free H4 (Laplace of scale
   1/(ε₃(s_i − s_{i−1})) on φ^v_{s_i+} in the paper); weighted PAVA with weights
   (s_i − s_{i−1})² (H5) and rounding (H6) give counts at the boundaries only.

**Defaults** (public choices; privacy depends on none of them). The paper runs HIGHPRIVACY for
ε ≤ 1; measured on Zipf(1.1) and staircase histograms of 10⁴–10⁶ items
(``benchmarks/anonymized_histograms.py``), LOWPRIVACY's sorted-ℓ₁ error is 2–2.5 times lower
from ε = 0.2 to 1 and HIGHPRIVACY's is lower at ε = 0.1 on 10³–10⁴ items (where LOWPRIVACY's 2M
fake counts, M ≈ 2·ln N/ε₂, dominate), so ``smoothing_up_to`` is 1/8, above the common ε = 0.1
(pass 1 for the paper's rule). The
budget split is §4's advice, ε₁ small and ε₂ = ε₃: ε₁ = ε/20, ε₃ = 19ε/40 (17–45% less error
than thirds).

**Privacy, as a coupling of noise transcripts** (Thm 1's ε-DP, in the form the conformance
suite checks, docs/conformance.md#unbounded-noise). The program's transcript is the outcomes of
its noise requests: N' = n + Z^a, then y = φ_{T+1} + M + Z^b, then the small and large vectors
(and, for HIGHPRIVACY, the X̃_i); the output is a function of N, the request-3 outcome and the
request-4 outcome alone (y is never used but through the requests), with T, M, the cap 2N and
the boundaries functions of N and the noisy large counts. For neighbours h, h′ (a count c
becomes c + 1), pair every transcript of h with one of h′ request by request: the same outcomes,
except y′ = y − 1 when c = T + 1 (the same Z^b). The pairing is a bijection, the paired
transcripts give the same output, and each request's likelihood ratio is at most the geometric
law's ratio at the ℓ₁ distance of the two requested vectors (shifted by the pairing), for
every outcome: request 1, distance 1 (ratio ≤ e^{ε̃₁}); if N = 0 nothing follows. Given N:
c + 1 ≤ T moves φ^{bs}_{(c+1)+} alone, by one (the tail sums Σ_{u≥s} φ_u are non-increasing in
s even with a negative φ_T, so φ^{bs}_{r+} = max(0, Σ_{u=r}^{T} φ_u)); c = T moves request 2 by
one and leaves request 3 as it is (φ_T + φ_{T+1} is unchanged, so is the split); c = T + 1
leaves request 2 at ratio 1 (paired y′ = y − 1) and request 3's small part as it is, and its
large part has T + 2 for one T + 1 (y ≥ 1) or is unchanged (y ≤ 0: h′'s deficit 1 − y removes
T + 2 first, the smallest count above T + 1); c ≥ T + 2 moves one sorted large count by one
(removing the k smallest keeps that). So block 2 costs at most e^{ε̃₂} on every transcript, and
block 3, on the same noisy large counts (so the same boundaries), moves one X_i by one (H1's cap
moves a count by at most one): e^{ε̃₃}. The product is the declared bound, for every
transcript, hence for every set of outputs. The conformance suite's exact check runs this
pairing on the program itself for every neighbouring pair of histograms with at most 6 items
and a window of N and y.

Where the paper's text is illegible the constants are chosen here; privacy depends on none of
them (each is a function of the already released N and N^{cℓ}), utility is tested:

- M = ⌈2·ln(N + 1)/ε̃₂⌉ (at least 1), with ε̃₂ the ε₂ sampler's achieved ε, so that
  Pr[|Z^b| > M] < (N + 1)^{−2}: the fake counts keep φ^b_T, φ^b_{T+1} ≥ 0 except with that
  probability (the paper's M ≈ 2 ln(N)/ε₂ up to the illegible sign); N is capped at
  ``MAX_ITEMS`` there, and parameters whose M at that cap exceeds :data:`MAX_FAKE_COUNTS` are
  refused when the mechanism is made (each fake count is a noise draw: this bounds a release's
  time and memory);
- T′ = ⌈10·√(N/ε₃)⌉, the top of the geometric grid;
- the grid from T to T′ steps from s to s + max(1, ⌊q·s⌋), a ratio of about 1 + q, with
  q = √(ln(2/ε₃)/(N·ε₃)) fixed as a rational (MPFR, 64 bits, deterministic). With ln(2/ε₃) the
  grid costs O(√(N·ln(2/ε₃)/ε₃)) noise and O(q·n) smoothing, Thm 1's √((n/ε)·log(2/ε)); and
  q·T ≥ 1, so no step is wasted.

All noise comes from one registered two-sided geometric sampler (:mod:`.sampler_choice`), built
once per block with that block's ε, and every decision is exact integer or rational arithmetic;
M and q, public, use MPFR. Accuracy: the released total, |N − n| ≤ the ε₁ sampler's a at β
(clamping at 0 only helps). Sorted-ℓ₁ errors are measured in the benchmarks
(``benchmarks/anonymized_histograms.py``).
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpq

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds import AccuracyScope, AnonymizedHistogramReleaser, Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import MAX_ITEMS, AnonymizedHistogram
from dpplug.param_types import RATIONAL
from dpplug.params import Param, Schema, epsilon_param
from dpplug.plugins.anonymized.pava import pava_blocks, rounded_runs
from dpplug.plugins.anonymized.prevalence import (
    add_counts,
    ceil_sqrt,
    large_counts,
    pairs_of_runs,
    prevalence,
    remove_closest,
    small_cumulative,
    smoothed_totals,
)
from dpplug.plugins.anonymized.sampler_choice import BETA_PARAM, SAMPLER_PARAM, geometric_sampler
from dpplug.program import Noise, Program, run
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

SORTED_L1 = Neighbouring(Relation.SORTED_L1)
#: The default budget split, Suresh §4 ("Privacy budget allocation"): ε₁ small, ε₂ = ε₃.
TOTAL_SHARE = mpq(1, 20)
SMOOTHING_SHARE = mpq(19, 40)
#: HIGHPRIVACY for ε up to this by default (the paper: 1; module docstring).
SMOOTHING_UP_TO = mpq(1, 8)
#: Bits of the MPFR arithmetic that fixes the public constants M and q.
_PUBLIC_PRECISION = 64
#: The most fake counts M a release adds (and draws noise for) at any N: about 100 MB and a
#: second of CPU. At the default shares it admits ε ≥ 1/8500 or so.
MAX_FAKE_COUNTS = 10**6


def _share(name: str, doc: str, high_open: bool, default: Any) -> Param:
    return Param(
        name,
        RATIONAL,
        doc,
        low=mpq(1, 100),
        high=mpq(1, 2),
        high_open=high_open,
        default=default,
        example=str(default),
    )


class PrivHist(AnonymizedHistogramReleaser):
    name = "privhist"
    summary = "Anonymized histogram and item count, pure ε-DP, sub-linear time (Suresh 2019)."
    reference = (
        "Suresh 2019, Differentially private anonymized histograms: PRIVHIST, "
        "PRIVHIST-LOWPRIVACY, PRIVHIST-HIGHPRIVACY, Thm 1"
    )
    accuracy_scope = AccuracyScope.TOTAL
    schema = Schema(
        (
            epsilon_param(
                "Total ε for sorted-ℓ₁ distance 1 (one count ±1); ε whose release would add over "
                "10⁶ fake counts is refused (below about 1/8500 at the default shares).",
                high=16,
            ),
            _share(
                "total_share",
                "ε₁/ε, spent on the number of items N (default 1/20: §4's small ε₁).",
                high_open=False,
                default=TOTAL_SHARE,
            ),
            _share(
                "smoothing_share",
                "ε₃/ε, spent on the smoothed prevalences when HIGHPRIVACY runs (otherwise it "
                "goes to ε₂; default 19/40: ε₂ = ε₃).",
                high_open=True,
                default=SMOOTHING_SHARE,
            ),
            Param(
                "smoothing_up_to",
                RATIONAL,
                "PRIVHIST-HIGHPRIVACY (the smoothing block ε₃) for ε up to this, "
                "PRIVHIST-LOWPRIVACY above it (the paper: 1; the default is where measured "
                "errors cross).",
                low=0,
                high=16,
                default=SMOOTHING_UP_TO,
                example="1",
            ),
            SAMPLER_PARAM,
            BETA_PARAM,
        )
    )
    conformance_cases = ({"epsilon": mpq(1, 2), "smoothing_up_to": 1}, {"epsilon": 2})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        epsilon = self.params["epsilon"]
        self.epsilon = epsilon
        self.high_privacy = bool(epsilon <= self.params["smoothing_up_to"])
        eps1 = epsilon * self.params["total_share"]
        eps3 = epsilon * self.params["smoothing_share"] if self.high_privacy else mpq(0)
        eps2 = epsilon - eps1 - eps3
        build = partial(geometric_sampler, self.name, self.params["sampler"])
        registry = self.registry_in_use()
        self.total_sampler = build(eps1, registry)
        self.split_sampler = build(eps2, registry)
        self.smoothing_sampler = build(eps3, registry) if self.high_privacy else None
        self.epsilons = (eps1, eps2, eps3)
        self.derived = {"epsilons": self.epsilons, "sampler": repr(self.split_sampler)}
        if (most := self.fake_counts(MAX_ITEMS)) > MAX_FAKE_COUNTS:
            raise BadParameter(
                f"{self.name} with epsilon={epsilon} spends ε₂ = {float(eps2):.3g} on the split, "
                f"so a release of up to {MAX_ITEMS} items adds up to M = {most} fake counts, each "
                f"a noise draw: more than the {MAX_FAKE_COUNTS} a release may draw. Raise epsilon "
                "(or lower total_share and smoothing_share, which leaves ε₂ more)"
            )

    @property
    def guarantee(self) -> Guarantee:
        bound = self.total_sampler.guarantee.exp_epsilon * self.split_sampler.guarantee.exp_epsilon
        if self.smoothing_sampler is not None:
            bound *= self.smoothing_sampler.guarantee.exp_epsilon
        return Guarantee(bound, 0, SORTED_L1)

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(self.total_sampler.accuracy(beta).per_query.a, beta)
        formula = f"the total N = max(n + Z, 0): {self.total_sampler.name}'s a at β for ε₁"
        return Accuracy(bound, bound, formula=formula)

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (the release runs :meth:`program`)."""
        return ServedDraws()

    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        return run(partial(self.program, prevalences), source)

    # The public constants, functions of the released N only.

    def split_point(self, total: int) -> int:
        """T = ⌈√(N·min(ε, 1))⌉."""
        return ceil_sqrt(total * min(self.epsilon, mpq(1)))

    def fake_counts(self, total: int) -> int:
        """M = ⌈2·ln(N + 1)/ε̃₂⌉ ≥ 1, N capped at ``MAX_ITEMS`` (see the module docstring)."""
        return _fake_counts(self.split_sampler.guarantee.exp_epsilon, min(total, MAX_ITEMS))

    def boundaries(self, total: int, split: int, large: list[int]) -> np.ndarray[Any, Any]:
        """S of H2: 1…T, the grid from T to T′, the noisy large counts ≥ T′, and 2N; at most
        2N, sorted, without repeats."""
        eps3 = self.epsilons[2]
        top = 2 * total
        grid_top = min(ceil_sqrt(100 * mpq(total) / eps3), top)
        with gmpy2.context(precision=_PUBLIC_PRECISION):
            q = mpq(gmpy2.sqrt(gmpy2.log(2 / mpfr(eps3)) / (total * mpfr(eps3))))
        points = set(range(1, split + 1))
        s = split
        while s <= grid_top:
            points.add(s)
            s += max(1, int(s * q))
        points.update(x for x in large if grid_top <= x <= top)
        points.add(top)
        return np.array(sorted(points), dtype=np.int64)

    # The algorithm, as a sampling program of noise requests (dpplug.program).

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        """PRIVHIST on validated prevalences; every draw is a :class:`~dpplug.program.Noise`
        request of one of the three blocks' samplers."""
        pairs = prevalences.pairs
        (noisy_total,) = yield Noise(self.total_sampler, [prevalences.items])
        total = max(int(noisy_total), 0)
        if total == 0:
            return self.histogram({}, 0)
        t, m = self.split_point(total), self.fake_counts(total)
        # Block ε₂: Z^b first, then the small cumulative prevalences and the large counts.
        at_t, at_t1 = prevalence(pairs, t) + m, prevalence(pairs, t + 1) + m
        (moved,) = yield Noise(self.split_sampler, [at_t1])  # φ^a_{T+1} + Z^b
        small = small_cumulative(pairs, t, at_t + at_t1 - int(moved))
        large = large_counts(pairs, t, int(moved))
        noisy = yield Noise(self.split_sampler, [*small.tolist(), *large])
        noisy_small, noisy_large = list(noisy[:t]), list(noisy[t:])
        if not self.high_privacy:
            return self.histogram(self._low_privacy(noisy_small, noisy_large, t, m), total)
        # Block ε₃: smoothed cumulative prevalences at the boundaries S.
        capped = _capped(pairs, 2 * total)
        boundaries = self.boundaries(total, t, noisy_large)
        totals = smoothed_totals(capped, boundaries)
        assert self.smoothing_sampler is not None  # built whenever HIGHPRIVACY runs
        noisy_totals = yield Noise(self.smoothing_sampler, totals.tolist())
        return self.histogram(_high_privacy(noisy_totals, boundaries), total)

    @staticmethod
    def _low_privacy(small: list[int], large: list[int], t: int, m: int) -> dict[int, int]:
        """PRIVHIST-LOWPRIVACY L1–L4."""
        runs = rounded_runs(pava_blocks(small, [1] * len(small)))
        combined = add_counts(pairs_of_runs(runs, range(1, t + 1)), (max(x, t) for x in large))
        return remove_closest(remove_closest(combined, t + 1, m), t, m)


@lru_cache(maxsize=1024)
def _fake_counts(exp_epsilon2: Any, total: int) -> int:
    """M for ε̃₂ = ln(*exp_epsilon2*) and N = *total*, in 64-bit MPFR; remembered for the last
    1024 (e^ε̃₂, N): small histograms see the same few N again and again."""
    with gmpy2.context(precision=_PUBLIC_PRECISION):
        eps2 = gmpy2.log(mpfr(exp_epsilon2))
        return max(1, int(gmpy2.ceil(2 * gmpy2.log(mpfr(total + 1)) / eps2)))


def _capped(pairs: tuple[tuple[int, int], ...], cap: int) -> list[tuple[int, int]]:
    """H1: every count ≥ cap moved to cap."""
    below = [(r, phi) for r, phi in pairs if r < cap]
    at_cap = sum(phi for r, phi in pairs if r >= cap)
    return below + ([(cap, at_cap)] if at_cap else [])


def _high_privacy(
    noisy_totals: tuple[int, ...], boundaries: np.ndarray[Any, Any]
) -> dict[int, int]:
    """H4–H6: φ^w_{s_i+} = X̃_i/w_i, weighted PAVA with weights w_i² (as sums w_i·X̃_i over
    weights w_i², all integers), rounding, and prevalences at the boundaries."""
    widths = np.diff(boundaries, prepend=0).tolist()
    sums = [w * int(x) for w, x in zip(widths, noisy_totals, strict=True)]
    runs = rounded_runs(pava_blocks(sums, [w * w for w in widths]))
    return pairs_of_runs(runs, boundaries.tolist())
