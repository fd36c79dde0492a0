"""The blanket sparse histogram (Kerschbaum, Lee and Wu, "Optimal Pure Differentially Private
Sparse Histograms in Deterministic Linear Time", 2025, the tail-item padding algorithm;
docs/blanket-histogram.md has the proof): pure DP over a huge universe in time linear in n + k.

1. Each nonempty bin x (true count h_x ≥ 1) is kept independently with probability q(h_x),
   a dyadic ramp that rises by a factor at most λ per row from a tiny q(1) (and whose
   complement falls by at most λ; :mod:`.selection_ramp`), the exact analogue of thresholding
   the count plus geometric noise. q(1) is so small that a uniformly random padding can hide a
   bin of count 1 that was kept: the *blanket*.
2. The kept set I₁ is padded with a uniformly random set of L − |I₁| other labels, L = n + k
   (:mod:`.padding`: Floyd's algorithm over the labels outside I₁, never touching the rest of
   the universe), so that exactly L labels are chosen whatever the data.
3. Each chosen label gets a fresh noisy count M(h_x) from the releaser's sampler (h_x = 0 for
   a label outside the data; an unkept nonempty bin picked by the padding gets its true count's
   noise), and the labels whose noisy count is positive are released, in canonical order.

**Privacy** (docs/blanket-histogram.md). With λ = 1/p, λ_M the sampler's bound for counts one
apart, ρ = (|X| − n + 1)/(k + 1) and q₁ = q(1), the release is Λ-DP for datasets of at most n
rows that differ by one row replaced, added or removed (the empty dataset included), where

    Λ = max(λ, 1 + q₁(ρ − 1)) · λ_M · max(λ·λ_M, 1/(1 − q₁)).

The ramp starts at q₁ ≤ min((λ − 1)/(ρ − 1), 1 − 1/(λ·λ_M)), so Λ = (λ·λ_M)². The budget ε is
split ε/2 = ε_s + ε_c per row moved: λ = 1/p with p = e^{−ε_s} rounded up to m/2^64 and the
sampler built for ε_c, so Λ ≤ e^ε exactly (checked against a rigorous lower bound of e^ε).
The share θ = 2ε_s/ε is the sixteenth that makes the declared simultaneous error smallest (or
given as ``selection_share``).

**Accuracy.** A release errs by more than a only if a chosen label's noise exceeds a (at most L
labels, each within the sampler's a at β_c/L) or a bin of count above a is not chosen, which
over a dataset of at most n rows has probability at most n·(1 − q(a + 1))/(a + 1) (the drop
probability falls as the count grows and the counts sum to at most n). The simultaneous a is the
smallest over a split β = β_c + β_s in sixteenths. Per query: the sampler's a at 15β/16, for
counts above the T with 1 − q(T + 1) ≤ β/16.

**Cost.** The selection is one draw per nonempty bin, the padding L − |I₁| exact uniform draws
(one or two 64-bit words each up to 2^128 labels), the noise one sampler call on L counts; the
rest is sorting and merging L labels, all vectorised (:mod:`.wide_indices`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import BadParameter, NotSupported
from dpplug.exact import exp_lower, exp_upper, smallest_at_least
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler, HistogramReleaser, SparseHistogram, TrueCounts
from dpplug.param_types import INTEGER, RATIONAL
from dpplug.params import Param, Schema
from dpplug.plugins.histograms.coverage import warn_if_uncovered
from dpplug.plugins.histograms.padding import Padding
from dpplug.plugins.histograms.sampler_choice import (
    HALF,
    REPLACE_ONE,
    build_sampler,
    releaser_params,
)
from dpplug.plugins.histograms.selection_ramp import SelectionRamp
from dpplug.plugins.histograms.wide_indices import Indices
from dpplug.program import Draw, Noise, Program, run
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

Ints = npt.NDArray[np.int64]

#: The largest n (a release handles n + k ≤ 2n + … labels, about 1 s of CPU per 10^6 rows).
MAX_N = 1 << 24
#: The selection share and the β split are chosen among multiples of 1/SPLITS.
SPLITS = 16
#: Bits of the denominators of p (e^{−ε_s} rounded up) and of the lower bound of e^ε.
_DENOMINATOR_BITS = 64
_CHECK_BITS = 256
#: The least ε_s of the selection (as the samplers' least ε): below it the ramp would climb by
#: too small a ratio for its few hundred thousand steps (:data:`.selection_ramp.MAX_STEPS`).
MIN_SELECTION_EPSILON = mpq(1, 1 << 10)
#: The most nonempty bins whose selection law is enumerated (2^16 outcomes).
MAX_ENUMERATED_BINS = 16


class Selected(Draw):
    """Which nonempty bins the selection keeps: a boolean per bin (a numpy array when sampled,
    a tuple in the law)."""

    def __init__(self, selection: SelectionRamp, counts: Ints) -> None:
        self.selection, self.counts = selection, counts

    def sample(self, source: RandomSource) -> npt.NDArray[np.bool_]:
        return self.selection.sample(self.counts, source)

    def law(self) -> dict[tuple[bool, ...], Any]:
        if self.counts.size > MAX_ENUMERATED_BINS:
            raise NotSupported(
                f"the selection of {self.counts.size} bins has 2^{self.counts.size} outcomes"
            )
        law: dict[tuple[bool, ...], Any] = {(): mpq(1)}
        for count in self.counts.tolist():
            keep = self.selection.keep(count)
            law = {
                (*outcome, kept): p * (keep if kept else 1 - keep)
                for outcome, p in law.items()
                for kept in (False, True)
            }
        return law


class NoisyCounts(Noise):
    """The sampler's noisy counts for the chosen labels' true counts (an array), sampled as an
    array (not a tuple of ints: the program takes either); the law is
    :class:`~dpplug.program.Noise`'s."""

    def __init__(self, sampler: CountingQuerySampler, counts: Ints) -> None:
        super().__init__(sampler, counts.tolist())
        self.array = counts

    def sample(self, source: RandomSource) -> Any:
        return self.sampler.sample(self.array, source)


@dataclass(frozen=True)
class Calibration:
    """One split of the budget: the selection share θ, the selection ramp, the sampler, and the
    guarantee Λ = (λ·λ_M)²."""

    share: Any
    selection: SelectionRamp
    sampler: CountingQuerySampler
    exp_epsilon: Any


def _k_param() -> Param:
    return Param(
        "k",
        INTEGER,
        "Padding: every release chooses n + k labels (default n, or |X| − n when smaller); a "
        "larger k lets the selection keep more small bins and costs time.",
        low=1,
        high=MAX_N,
        optional=True,
        example="1000",
    )


def _share_param() -> Param:
    return Param(
        "selection_share",
        RATIONAL,
        "Share of ε/2 spent on selecting bins, the rest on their counts (default: the sixteenth "
        "that makes the declared simultaneous error smallest).",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
        optional=True,
        example="3/4",
    )


class BlanketSparseHistogramReleaser(HistogramReleaser):
    name = "blanket-sparse-histogram"
    summary = (
        "Noisily selected bins padded with random labels to n + k, fresh noisy counts: pure DP "
        "over a huge universe in time linear in n + k."
    )
    reference = (
        "Kerschbaum, Lee & Wu 2025, Optimal Pure Differentially Private Sparse Histograms in "
        "Deterministic Linear Time: tail-item padding"
    )
    schema = Schema(
        (
            *releaser_params(
                "oblivious-laplace",
                max_n=MAX_N,
                beyond=(
                    "a release handles about 2n labels, about 1 s of CPU per 10^6 rows; for "
                    "more rows use stability-histogram (approximate DP)"
                ),
            ),
            _k_param(),
            _share_param(),
        )
    )
    #: Tiny universes (a law has about C(|X|, n + k)·(n + 1)^{n+k} outputs), so that the
    #: selection decides: a bin of count 1 is kept with probability about 0.63 in the first and
    #: 0.37 in the second, whose share the releaser chooses.
    conformance_cases = (
        {"universe": "range:0:4", "n": 2, "epsilon": 2, "k": 1, "selection_share": mpq(1, 2)},
        {"universe": "range:0:5", "n": 2, "epsilon": 1, "sampler": "geosample", "k": 1},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = n = self.params["n"]
        size = self.universe.size
        if size <= n:
            raise BadParameter(
                f"blanket-sparse-histogram pads to n + k labels with k ≥ 1, so it needs "
                f"|X| ≥ n + 1, but |X| = {size} and n = {n}; declare a larger universe or use "
                f"basic-histogram"
            )
        given_k = self.params["k"]
        self.k = min(n, size - n) if given_k is None else given_k
        if n + self.k > size:
            raise BadParameter(
                f"blanket-sparse-histogram chooses n + k = {n + self.k} labels, more than the "
                f"{size} of {self.universe.spec}; use k ≤ {size - n}"
            )
        #: L = n + k: the labels every release chooses.
        self.labels = n + self.k
        #: ρ: the largest ratio C(|X| − t, L − t)/C(|X| − t − 1, L − t − 1) over t ≤ n − 1.
        self.rho = mpq(size - n + 1, self.k + 1)
        self._calibrations: dict[Any, Calibration] = {}
        share = self.params["selection_share"]
        self.calibration = self._calibrate(share) if share is not None else self._best_share()
        self.selection = self.calibration.selection
        self.sampler = self.calibration.sampler
        self.derived = {
            "k": self.k,
            "selection_share": self.calibration.share,
            "selection_ratio": self.selection.ratio,
            "median_kept_count": self.selection.median,
            "selection_bits": self.selection.bits,
            "sampler": repr(self.sampler),
        }
        warn_if_uncovered(self)

    # Calibration: ε split between the selection and the counts.

    def _calibrate(self, share: Any) -> Calibration:
        """The selection and sampler for selection share θ = *share* (module docstring)."""
        if share in self._calibrations:
            return self._calibrations[share]
        epsilon = self.params["epsilon"]
        if epsilon is None:
            raise BadParameter(f"missing parameter epsilon for {self.name}: pass epsilon=…, e.g. 1")
        if epsilon * share / 2 < MIN_SELECTION_EPSILON:
            raise BadParameter(
                f"{self.name} spends ε·selection_share/2 = {float(epsilon * share / 2):.3g} on "
                f"selecting bins, less than {MIN_SELECTION_EPSILON}; give a larger epsilon or "
                f"selection_share"
            )
        ratio = exp_upper(-epsilon * share / 2, _DENOMINATOR_BITS)
        gamma = (self.params["beta"] / (SPLITS * self.labels), "β/(16(n + k))")
        sampler = build_sampler(
            self.name,
            self.params,
            self.registry_in_use(),
            epsilon_share=(1 - share) / 2,
            gamma=gamma,
        )
        low, high = sampler.count_bounds
        if (low, high) != (0, self.n) or not sampler.guarantee.pure:
            raise BadParameter(
                f"{self.name} needs a pure-DP sampler with outputs in [0, n]; {sampler.name} "
                f"does not qualify: use oblivious-laplace, fixedpoint-geometric, geosample or "
                f"fastsample"
            )
        lam, lam_m = 1 / ratio, sampler.guarantee.exp_epsilon
        # q(1) ≤ Q makes 1 + q(1)(ρ − 1) ≤ λ (the padding hides a bin of count 1) and
        # 1/(1 − q(1)) ≤ λ·λ_M (dropping it costs no more than changing a count).
        first = 1 - 1 / (lam * lam_m)
        if self.rho > 1:
            first = min(first, (lam - 1) / (self.rho - 1))
        selection = SelectionRamp.build(lam, first, self.n)
        exp_epsilon = (lam * lam_m) ** 2
        if exp_epsilon > exp_lower(epsilon, _CHECK_BITS):
            raise BadParameter(
                f"{self.name} with {sampler.name} would spend e^ε = {float(exp_epsilon):.6g}, "
                f"more than the e^{epsilon} asked ({sampler.name} declares more than its share "
                f"ε·{(1 - share) / 2}); pick another sampler"
            )
        found = Calibration(share, selection, sampler, exp_epsilon)
        self._calibrations[share] = found
        return found

    def _best_share(self) -> Calibration:
        """The selection share, a sixteenth, with the smallest declared simultaneous error (the
        one nearest 1/2 among equals): the best of 4/16, 8/16 and 12/16, then of its neighbours
        2/16 and 1/16 away (the count noise's bound grows with the share and the selection's
        falls, so the error is lowest in one valley), unless all three are n. Shares the
        selection or the sampler cannot take (an ε below their least) are passed over."""
        beta = self.params["beta"]
        scores: dict[int, tuple[int, Any] | None] = {}
        refusal: BadParameter | None = None

        def score(i: int) -> tuple[int, Any] | None:
            nonlocal refusal
            if i not in scores:
                share = mpq(i, SPLITS)
                try:
                    calibration = self._calibrate(share)
                except BadParameter as exc:
                    refusal, scores[i] = exc, None
                else:
                    scores[i] = (self._simultaneous(calibration, beta)[0], abs(share - HALF))
            return scores[i]

        def best(candidates: list[int]) -> int | None:
            scored = [(found, i) for i in candidates if 0 < i < SPLITS and (found := score(i))]
            return min(scored)[1] if scored else None

        chosen = best([4, 8, 12]) or best(list(range(1, SPLITS)))
        if chosen is None:
            assert refusal is not None
            raise refusal
        coarse = {found[0] for i in (4, 8, 12) if (found := scores.get(i))}
        if coarse != {self.n}:  # all at n: no share makes the release accurate
            for step in (2, 1):
                chosen = best([chosen - step, chosen, chosen + step]) or chosen
        return self._calibrate(mpq(chosen, SPLITS))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.calibration.exp_epsilon, 0, REPLACE_ONE)

    # Accuracy.

    def _count_error(self, calibration: Calibration, beta: Any) -> int:
        """Every one of the L chosen labels' noise within a, except with probability β."""
        return int(calibration.sampler.accuracy(beta / self.labels).per_query.a)

    def _selection_error(self, calibration: Calibration, beta: Any) -> int:
        """The smallest a with n·(1 − q(a + 1)) ≤ β·(a + 1): no bin of count above a dropped."""
        selection, n = calibration.selection, self.n

        def holds(a: int) -> bool:
            return bool(n * selection.drop(a + 1) <= beta * (a + 1))

        return smallest_at_least(holds, 0, n, True)

    def _simultaneous(self, calibration: Calibration, beta: Any) -> tuple[int, Any]:
        """(a, β_c): the smallest a over the splits β = β_c + β_s in sixteenths."""
        best: tuple[int, Any] | None = None
        for i in range(1, SPLITS):
            counts = beta * mpq(i, SPLITS)
            a = max(
                self._count_error(calibration, counts),
                self._selection_error(calibration, beta - counts),
            )
            if best is None or a < best[0]:
                best = (min(a, self.n), counts)
        assert best is not None
        return best

    def covered_above(self, beta: Any) -> int:
        """T: the smallest count with 1 − q(T + 1) ≤ β/16, at most n (for :mod:`.coverage`)."""
        selection = self.selection

        def holds(t: int) -> bool:
            return bool(selection.drop(t + 1) * SPLITS <= beta)

        return smallest_at_least(holds, 0, self.n, True)

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta * mpq(SPLITS - 1, SPLITS)).per_query.a
        everywhere, counts = self._simultaneous(self.calibration, beta)
        return Accuracy(
            ErrorBound(min(per_query, self.n), beta),
            ErrorBound(everywhere, beta),
            threshold=self.covered_above(beta),
            formula=(
                f"per query: the sampler's a at 15β/16 on counts c with 1 − q(c) ≤ β/16; all "
                f"bins: the larger of the sampler's a at β_c/(n + k) and the smallest a with "
                f"n(1 − q(a + 1))/(a + 1) ≤ β − β_c, β_c = {counts / beta}·β"
            ),
        )

    # The release.

    def program(self, counts: TrueCounts) -> Program[SparseHistogram]:
        """The release as a program of draws (sampled by :meth:`release`; its exact law is
        computable on tiny cases)."""
        support = Indices.of(counts.indices)
        kept = np.asarray((yield Selected(self.selection, counts.counts)), dtype=bool)
        chosen = support.pick(kept)
        padding = yield Padding(self.universe.size, chosen, self.labels - len(chosen))
        labels = chosen.union(padding if isinstance(padding, Indices) else Indices.of(padding))
        where = support.lookup(labels)
        true = np.zeros(where.size, dtype=np.int64)
        true[where >= 0] = counts.counts[where[where >= 0]]
        noisy = np.asarray((yield NoisyCounts(self.sampler, true)), dtype=np.int64)
        shown = noisy > 0
        return SparseHistogram(
            self.universe,
            tuple(labels.pick(shown).tolist()),
            tuple(noisy[shown].tolist()),
            *self._attached,
        )

    @cached_property
    def _attached(self) -> tuple[Guarantee, Accuracy, str]:
        """What every release carries: the guarantee, the accuracy at the releaser's β and the
        releaser's description."""
        return self.guarantee, self.accuracy(self.params["beta"]), repr(self)

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (the release runs :meth:`program`)."""
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        return run(partial(self.program, counts), source)
