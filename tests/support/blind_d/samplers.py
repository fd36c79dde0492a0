# ruff: noqa: E402, E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Samplers (rtd-geo-*)."""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.plugins.samplers.geosample import GeoSample


class GeoModBias(GeoSample):
    """Flaw: the bulk path draws U(d) as (63-bit word mod d) + 1, a modulo bias that breaks the exact a/b ratio."""

    name = "rtd-geo-modbias"
    summary = "GeoSample with a vectorised U(d) for d < 2^63 (one 63-bit word per count)."

    def _sample(self, counts: Any, source: Any) -> Any:
        if counts.size > 1 and self.d < (1 << 63):
            words = source.bits_array(63, counts.size)
            u = (words % np.uint64(self.d)).astype(np.int64) + 1
            out = np.empty(counts.size, dtype=np.int64)
            for c in np.unique(counts).tolist():  # d < 2^63: the scaled CDF fits in int64
                table = np.array(
                    [self._scaled_cdf(z, c) for z in range(self.n + 1)], dtype=np.int64
                )
                where = counts == c
                out[where] = np.searchsorted(table, u[where], side="left")
            return out
        return super()._sample(counts, source)


class GeoScalarOffByOne(GeoSample):
    """Flaw: the one-count path (OpenDP's scalar route) draws u from [2, d] instead of [1, d]."""

    name = "rtd-geo-scalar-offbyone"
    summary = "GeoSample with a scalar fast path for single counts."

    def _sample(self, counts: Any, source: Any) -> Any:
        if counts.size == 1:
            u = source.uniform(self.d - 1) + 1  # off by one: u ∈ [2, d]
            return np.array([self._output(int(counts[0]), u)], dtype=np.int64)
        return super()._sample(counts, source)


class GeoHalfCap(GeoSample):
    """Flaw: the declared error is capped at ⌈n/2⌉ ("a clamped count is never more than half the range off"), false for counts near 0 or n."""

    name = "rtd-geo-acc-halfcap"
    summary = "GeoSample whose accuracy uses the clamping to [0, n]."

    def _accuracy(self, beta: Any) -> Accuracy:
        base = super()._accuracy(beta)
        a = min(base.per_query.a, (self.n + 1) // 2)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula=base.formula + ", at most ⌈n/2⌉")


class OkGeoTable(GeoSample):
    """Honest control: GeoSample whose vectorised path inverts a cached scaled-CDF table per distinct count (same law, same draws)."""

    name = "rtd-ok-geo-table"
    summary = "GeoSample with a table-driven inverse CDF."

    def _sample(self, counts: Any, source: Any) -> Any:
        if self.n > 64:  # the table path is for small n only
            return super()._sample(counts, source)
        tables: dict[int, list[int]] = {}
        out = np.empty(counts.size, dtype=np.int64)
        for i, c in enumerate(counts.tolist()):
            table = tables.get(c)
            if table is None:
                table = [self._scaled_cdf(z, c) for z in range(self.n + 1)]
                tables[c] = table
            u = source.uniform(self.d)
            out[i] = bisect.bisect_left(table, u)  # smallest z with F(c, z) ≥ u
        return out


import gmpy2
from gmpy2 import mpfr


class GeoDoubleBoundaries(GeoSample):
    """Flaw: for n ≥ 64 the inverse CDF compares u with G(j) evaluated in 53-bit MPFR, no exact tie-break: the output law's boundaries move and the exact ratio a/b is lost."""

    name = "rtd-geo-double-boundaries"
    summary = "GeoSample with a double-precision inverse CDF for large n."

    def _g_double(self, j: int) -> Any:
        with gmpy2.context(gmpy2.get_context(), precision=53):
            return self._g(j)(lambda x: mpfr(x))

    def _output(self, count: int, u: int) -> int:
        if self.n < 64:
            return super()._output(count, u)
        lo, hi = -self.n, self.n  # smallest j in [lo, hi] with G(j) ≥ u (G(n) = d ≥ u)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._g_double(mid) >= u:
                hi = mid
            else:
                lo = mid + 1
        return min(max(count + lo, 0), self.n)


from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace

#: Noise beyond the law's listed window is clipped (the window pmf() lists).
CLIP = 32


class DlapClip(DiscreteLaplace):
    """Flaw: the noise is clipped to the ±32 window pmf() lists ("outputs stay bounded"), so c + 33 is impossible for count c but not for c + 1."""

    name = "rtd-dlap-clip32"
    summary = "Discrete Laplace with noise clipped to its listed window."

    def _sample(self, counts: Any, source: Any) -> Any:
        z = self._geometric(counts.size, source) - self._geometric(counts.size, source)
        return counts + np.clip(z, -CLIP, CLIP)
