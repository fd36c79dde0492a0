"""Anonymized-histogram releasers (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds import AccuracyScope, AnonymizedHistogramReleaser, Prevalences
from dpplug.param_types import INTEGER
from dpplug.params import Param, Schema, epsilon_param
from dpplug.plugins.anonymized.sampler_choice import BETA_PARAM, geometric_sampler
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.program import Noise, Program, run
from dpplug.structures import ServedDraws


class ParamsRecordLabels(SortedHistogram):
    """FLAW: the release's ``params`` record the data's number of distinct labels ("so a
    reader knows how much was padded"): a count of 1 appearing or vanishing changes it."""

    name = "rtg-ah-params-labels"
    summary = "sorted-histogram whose release records how many labels were padded."

    def _release(self, prevalences, source):  # type: ignore[no-untyped-def]
        release = super()._release(prevalences, source)
        release.params["labels"] = str(prevalences.counts)
        return release


class ThreeDecimalEpsilon(SortedHistogram):
    """FLAW: the noise is built from ε written with 3 decimals (round(ε, 3), as in a config
    string) while the guarantee is computed from the exact ε: ε = 2/3 builds noise at 0.667."""

    name = "rtg-ah-eps-3dp"
    summary = "sorted-histogram with the sampler configured from ε as text (3 decimals)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        text = f"{float(self.params['epsilon']):.3f}"
        self.sampler = geometric_sampler(
            self.name, self.params["sampler"], mpq(text), self.registry_in_use()
        )
        self.derived = {"sampler": repr(self.sampler)}

    @property
    def guarantee(self) -> Guarantee:
        # the sampler's e^ε for the ε asked for (α rounded up to 32 bits, as discrete-laplace)
        from dpplug.exact import exp_upper

        return Guarantee(
            1 / exp_upper(-self.params["epsilon"], 32), 0, Neighbouring(Relation.SORTED_L1)
        )

    conformance_cases = ({"epsilon": 1, "length": 6}, {"epsilon": 2, "length": 8})


class SortedRepeat(SortedHistogram):
    """CONTROL: sorted-histogram with the padded vector built by np.repeat over the pairs in
    decreasing r (the same vector, computed in one call)."""

    name = "rtg-ok-ah-sorted-repeat"
    summary = "sorted-histogram, padded vector by np.repeat."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        if prevalences.counts > self.length:
            raise BadData(f"the data has {prevalences.counts} labels, more than {self.length}")
        pairs = prevalences.pairs[::-1]
        values = np.repeat(
            np.array([r for r, _ in pairs], dtype=np.int64),
            np.array([phi for _, phi in pairs], dtype=np.int64),
        )
        out = np.zeros(self.length, dtype=np.int64)
        out[: values.size] = values
        return out


class CumulativeToMaxCount(AnonymizedHistogramReleaser):
    """FLAW: noisy cumulative prevalences φ_{r+} + G(e^ε) for r = 1 … R, but only up to the
    data's largest count ("the entries above it are 0 and the running minimum zeroes them
    anyway"); no released count can exceed the true maximum, so P[max released > m] is 0 for
    data whose largest count is m and positive for its neighbour with m + 1."""

    name = "rtg-ah-cumulative-maxcount"
    summary = "Noisy cumulative prevalences up to a public R, running minimum, clipped at 0."
    reference = "Suresh 2019, §3 (cumulative prevalences); Hay et al. 2010 (consistency)"
    accuracy_scope = AccuracyScope.TOTAL
    schema = Schema(
        (
            epsilon_param("ε for sorted-ℓ₁ distance 1.", high=16),
            Param("max_count", INTEGER, "Public bound R on every count.", low=1, high=10**5),
            BETA_PARAM,
        )
    )
    conformance_cases = ({"epsilon": 1, "max_count": 4}, {"epsilon": 2, "max_count": 6})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.max_count = self.params["max_count"]
        self.sampler = geometric_sampler(
            self.name, "discrete-laplace", self.params["epsilon"], self.registry_in_use()
        )

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.sampler.guarantee.exp_epsilon, 0, Neighbouring(Relation.SORTED_L1))

    def _accuracy(self, beta: Any) -> Accuracy:
        r = self.max_count
        bound = ErrorBound(r * self.sampler.accuracy(beta / r).per_query.a, beta)
        return Accuracy(bound, bound, formula="R·a(β/R): |N − n| ≤ R·max|Z|")

    def exact_structure(self) -> ServedDraws:
        return ServedDraws()

    def _span(self, prevalences: Prevalences) -> int:
        return max((r for r, _ in prevalences.pairs), default=0)

    def program(self, prevalences: Prevalences) -> Program[Any]:
        if prevalences.pairs and prevalences.pairs[-1][0] > self.max_count:
            raise BadData(f"a count exceeds the public max_count = {self.max_count}")
        cumulative = [0] * self.max_count
        for r, phi in prevalences.pairs:
            for s in range(r):
                cumulative[s] += phi
        span = self._span(prevalences)
        noisy = list((yield Noise(self.sampler, cumulative[:span]))) if span else []
        noisy += [0] * (self.max_count - span)
        values, low = [], None
        for x in noisy:
            low = max(x, 0) if low is None else min(low, max(x, 0))
            values.append(low)
        counts: dict[int, int] = {}
        for r in range(1, self.max_count + 1):
            here = values[r - 1] - (values[r] if r < self.max_count else 0)
            if here:
                counts[r] = here
        return self.histogram(counts, sum(values))

    def _release(self, prevalences, source):  # type: ignore[no-untyped-def]
        return run(partial(self.program, prevalences), source)


class CumulativeFull(CumulativeToMaxCount):
    """CONTROL: the same cumulative releaser with noise on all R entries (public length)."""

    name = "rtg-ok-ah-cumulative"
    summary = "Noisy cumulative prevalences on all of r = 1 … R, running minimum, clipped at 0."

    def _span(self, prevalences: Prevalences) -> int:
        return self.max_count
