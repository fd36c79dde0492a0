"""Samplers: GeoSample / discrete Laplace variants."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq, mpz

from dpplug.exact import smallest_error_bound, smallest_reaching
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.randomness import RandomSource

_MAX_TABLE_D = 1 << 62


def g_table(sampler: GeoSample) -> npt.NDArray[np.int64]:
    """[G(-n), ..., G(n-1), G(n) = d] as int64 (only while d < 2^62)."""
    n = sampler.n
    return np.array([int(sampler._g(j)(mpz)) for j in range(-n, n + 1)], dtype=np.int64)


class _TableGeoSample(GeoSample):
    """GeoSample with a vectorised inverse-CDF lookup: M(c, u) = clamp(c + j*, 0, n), j* the
    smallest j with G(j) >= u, found by np.searchsorted on the table of G."""

    side = "left"

    def _table(self) -> npt.NDArray[np.int64]:
        table = self.__dict__.get("_rtb_table")
        if table is None:
            table = self.__dict__["_rtb_table"] = g_table(self)
        return table

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        if self.d >= _MAX_TABLE_D:
            return super()._sample(counts, source)
        table = self._table()
        u = source.uniform_array(self.d, counts.size)
        j = np.searchsorted(table, u, side=self.side) - self.n
        return np.clip(counts + j, 0, self.n).astype(np.int64)


class OkTableGeoSample(_TableGeoSample):
    """Control: GeoSample's inverse CDF as one vectorised table lookup (side='left'), exact."""

    name = "rtb-ok-geosample-table"
    summary = "GeoSample with a vectorised searchsorted inverse CDF (honest control)."


class SearchsortedGeoSample(_TableGeoSample):
    """Flaw: the vectorised path uses searchsorted side='right' (smallest G(j) > u, not >= u)."""

    name = "rtb-geosample-searchsorted"
    summary = "GeoSample with a vectorised searchsorted inverse CDF."
    side = "right"


_SHARED_TABLES: dict[int, npt.NDArray[np.int64]] = {}


class SharedTableGeoSample(_TableGeoSample):
    """Flaw: the inverse-CDF table is cached per process keyed by n only (not by ε)."""

    name = "rtb-geosample-shared-table"
    summary = "GeoSample with a process-wide cache of inverse-CDF tables."
    conformance_cases = ({"n": 4, "epsilon": 1}, {"n": 6, "epsilon": 2})

    def _table(self) -> npt.NDArray[np.int64]:
        table = _SHARED_TABLES.get(self.n)
        if table is None:
            table = _SHARED_TABLES[self.n] = g_table(self)
        return table


class FloatAccuracyLaplace(DiscreteLaplace):
    """Flaw: accuracy(β) in floats, β clamped to the smallest normal double (unsound β <
    2^-1022)."""

    name = "rtb-dlap-float-accuracy"
    summary = "Discrete Laplace with a closed-form float accuracy."

    def _accuracy(self, beta: Any) -> Accuracy:
        alpha = float(self.alpha)
        b = max(float(beta), sys.float_info.min)  # avoid log(0)
        a = max(0, math.ceil(math.log(2 / ((1 + alpha) * b)) / -math.log(alpha)) - 1)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="a = ⌈ln(2/((1+α)β))/ln(1/α)⌉ − 1")


_CUT = mpq(1, 1 << 64)


class TailCutGeoSample(GeoSample):
    """Flaw: inverse-CDF search confined to |j| ≤ t (tail ≤ 2^-64), noise clipped to ±t; M(c, u)
    exact."""

    name = "rtb-geosample-tail-cut"
    summary = "GeoSample with a bounded inverse-CDF search for large n."

    def _cut(self) -> int:
        cut = self.__dict__.get("_rtb_cut")
        if cut is None:
            cut = self.__dict__["_rtb_cut"] = smallest_error_bound(self.geometric.tail, _CUT)
        return cut

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        if self.n <= 64:
            return super()._sample(counts, source)
        t = min(self._cut(), self.n)
        out = np.empty(counts.size, dtype=np.int64)
        for i, c in enumerate(counts.tolist()):
            u = source.uniform(self.d)
            j = smallest_reaching(self._g_exact, self._g_enclosure, -t, t, u)
            out[i] = min(max(c + j, 0), self.n)
        return out


class SensitivityTwoGeoSample(GeoSample):
    """Flaw: guarantee stated for sensitivity 2 with the sensitivity-1 e^ε."""

    name = "rtb-geosample-sensitivity-two"
    summary = "GeoSample for counting queries of sensitivity 2."

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.geometric.exp_epsilon, 0, Neighbouring(Relation.COUNT, sensitivity=2))


ALL = (
    OkTableGeoSample,
    SearchsortedGeoSample,
    SharedTableGeoSample,
    FloatAccuracyLaplace,
    TailCutGeoSample,
    SensitivityTwoGeoSample,
)
