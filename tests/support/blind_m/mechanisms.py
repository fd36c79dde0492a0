"""Red team M's missed plugins (see the package docstring), written by the red team against the
public base classes and kept here as they were, with typed signatures, and one of its controls."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.kinds.query_releaser.queries import LabelCounts
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.program import noise
from dpplug.randomness import RandomSource


class BetaTwoDigits(DiscreteLaplace):
    """FLAW: accuracy(β) is computed at β rounded to 2 significant digits (to the nearest)."""

    name = "rtm-dlap-beta-2sig"

    def _accuracy(self, beta: Any) -> Accuracy:
        rounded = mpq(float(f"{float(beta):.2g}")) if float(beta) > 1e-300 else mpq(beta)
        a = super()._accuracy(rounded).per_query.a
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with 2α^(a+1)/(1+α) ≤ β (β to 2 s.f.)")


class Int32Batches(DiscreteLaplace):
    """FLAW: batches whose counts all fit in int32 are noised in int32 arithmetic (wraps)."""

    name = "rtm-dlap-int32"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        z = self._geometric(counts.size, source) - self._geometric(counts.size, source)
        if counts.size and counts.max() < (1 << 31):
            with np.errstate(over="ignore"):
                small = counts.astype(np.int32) + z.astype(np.int32)
            return small.astype(np.int64)
        return counts + z


class DtypeByMax(BasicHistogramReleaser):
    """FLAW: the dense counts are stored as uint8 when the largest TRUE count (and output)
    fits."""

    name = "rtm-basic-dtype-by-max"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        out = super()._release(counts, source)
        assert isinstance(out, DenseHistogram)
        top = max(counts.counts, default=0)
        if top <= 255 and out.counts.size and out.counts.max() <= 255:
            narrow: Any = out.counts.astype(np.uint8)
            return DenseHistogram(out.universe, narrow, out.guarantee, out.accuracy, out.mechanism)
        return out


class Limbs(BasicHistogramReleaser):
    """FLAW: past n = 2^16, noise goes on the low 16 bits of a count only (hi + M(lo))."""

    name = "rtm-basic-limbs"
    LIMB = 1 << 16

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.limb_sampler: Any = None
        if self.n > self.LIMB:
            self.limb_sampler = self.registry_in_use().create(
                "geosample", n=self.LIMB, epsilon=self.params["epsilon"] / 2
            )

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        if self.limb_sampler is None:
            return super()._release(counts, source)
        size = self.universe.size
        true = np.zeros(size, dtype=np.int64)
        true[list(counts.indices)] = counts.counts
        high = (true >> 16) << 16
        noisy = np.minimum(high + noise(self.limb_sampler, true & 0xFFFF, source), self.n)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class DupesOnceSession(IndependentSession):
    def answers(self, queries: Any) -> list[Fraction]:
        parsed = [self.query(q) for q in queries]
        distinct = {(tuple(q.labels), tuple(q.weights)) for q in parsed}
        with self._lock:
            if len(distinct) > self.remaining:
                raise NotSupported(
                    f"this session covers k = {self.declaration.workload.max_queries} queries"
                )
            released = [Fraction(self._answer(q), self.scale) for q in parsed]
            self.answered += len(distinct)  # a repeated query is the same query
            return released


class DupesOnce(IndependentLaplace):
    """FLAW: a batch's repeated queries count once against k, but each gets fresh noise."""

    name = "rtm-ind-dupes-once"

    def _start(self, counts: LabelCounts, source: RandomSource) -> DupesOnceSession:
        return DupesOnceSession(self.declaration(), counts, self.noise_scale, source)


class OneCall(DiscreteLaplace):
    """Control: both geometrics of a batch drawn in one call of twice the size (same law)."""

    name = "rtm-ok-dlap-onecall"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        g = self._geometric(2 * counts.size, source)
        out: npt.NDArray[np.int64] = counts + g[: counts.size] - g[counts.size :]
        return out
