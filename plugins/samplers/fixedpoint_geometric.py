"""The clamped geometric mechanism on a 63-bit fixed-point table: exact pure DP, strict time,
vectorised (the fast route of Balcer & Vadhan, full version §3, with the privacy ratio enforced
directly; docs/mechanisms.md#fixedpoint-geometric).

Balcer–Vadhan approximate an ideal mechanism within a small total-variation distance and restore
pure DP by mixing (Lemma 3.2). Here the table itself is built so that its exact rational law is
pure DP, which needs no γ, no uniform mixture over n+1 values (not a power of two) and no
rejection: d = 2^63, and every count costs exactly one 63-bit draw and a table lookup.

**Law.** Z̃ on {−n, …, n} has integer weights W(j) = w_{|j|} out of 2^63, and the output is
clamp(c + Z̃, 0, n). With L ≤ e^ε a dyadic rational:

- w_0 is chosen as large as possible, w_{j+1} = ⌈w_j / L⌉ for 1 ≤ j+1 ≤ n−1 (the sequence
  decreases until it reaches its plateau ⌈w/L⌉ = w, then stays there);
- w_n, the mass the clamp folds onto the end, is ⌈w_{n−1}/(L−1)⌉ plus whatever makes the total
  exactly 2^63.

**Privacy.** For counts c and c+1 the interior outputs have probabilities W(z−c) and W(z−c−1)
with |z−c| ≤ n−1, and the end outputs have tail sums T_c = Σ_{i≥c} w_i. So the likelihood ratio is
at most L iff (i) w_j ≤ L·w_{j+1} and w_{j+1} ≤ L·w_j for 0 ≤ j ≤ n−2 and (ii) w_j ≤ (L−1)·T_{j+1}
for 0 ≤ j ≤ n−1. The construction gives both; :func:`_verify` checks them exactly on every
instance (on the plateau (i) is equality and (ii) follows from the check at j = n−1, since T only
grows as j decreases). The guarantee is e^ε ≤ L exactly, for counts differing by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import PluginFault
from dpplug.exact import ceil_div, exp_lower, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, count_bound_param, epsilon_param
from dpplug.plugins.samplers.noise_moments import ClampedNoise, integer_power_sums
from dpplug.randomness import RandomSource

TABLE_BITS = 63
TABLE_SIZE = 1 << TABLE_BITS
_DENOMINATOR_BITS = 32


@dataclass(frozen=True)
class _Weights:
    """One side of Z̃: w_0…w_R decreasing, then ``plateau_len`` copies of w_R, then the fold w_n."""

    decreasing: tuple[int, ...]
    plateau_len: int
    fold: int

    @property
    def plateau(self) -> int:
        return self.decreasing[-1]

    def total(self) -> int:
        side = sum(self.decreasing[1:]) + self.plateau * self.plateau_len + self.fold
        return self.decreasing[0] + 2 * side


def _weights(n: int, num: int, den: int, w0: int) -> _Weights:
    """The weights for centre w0 and L = num/den (see the module docstring)."""
    seq = [w0]
    while len(seq) < n:
        nxt = ceil_div(seq[-1] * den, num)
        if nxt == seq[-1]:
            break
        seq.append(nxt)
    return _Weights(tuple(seq), n - len(seq), ceil_div(seq[-1] * den, num - den))


def _build(n: int, num: int, den: int) -> _Weights:
    """The largest w0 whose weights fit in 2^63, with the remainder folded onto ±n."""
    lo, hi = 1, TABLE_SIZE
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _weights(n, num, den, mid).total() <= TABLE_SIZE:
            lo = mid
        else:
            hi = mid - 1
    w = _weights(n, num, den, lo)
    spare = TABLE_SIZE - w.total()
    if spare % 2:  # the fold counts twice; lowering w0 alone keeps every inequality
        w = _Weights((w.decreasing[0] - 1, *w.decreasing[1:]), w.plateau_len, w.fold)
        spare += 1
    return _Weights(w.decreasing, w.plateau_len, w.fold + spare // 2)


def _verify(w: _Weights, num: int, den: int) -> None:
    """Exact check of conditions (i), (ii) and the total; a failure is a bug, not bad input."""
    seq = w.decreasing
    ok = w.total() == TABLE_SIZE and min(seq) >= 1 and w.fold >= 1
    ok = ok and all(a * den <= num * b and b * den <= num * a for a, b in pairwise(seq))
    tail = w.plateau * w.plateau_len + w.fold
    ok = ok and w.plateau * den <= (num - den) * w.fold
    for value in reversed(seq):
        ok = ok and value * den <= (num - den) * tail
        tail += value
    if not ok:
        raise PluginFault("fixedpoint-geometric built a table that fails its privacy check")


class FixedPointGeometric(CountingQuerySampler):
    name = "fixedpoint-geometric"
    summary = "Clamped geometric on a 63-bit table: exact pure DP, one draw per count, vectorised."
    reference = (
        "Balcer & Vadhan, Differential Privacy on Finite Computers: §3 (approximate, then make "
        "exactly pure DP) and Def. 4.1; ratio enforced in the table"
    )
    strict_time = True
    schema = Schema(
        (
            count_bound_param(high=1 << 40),
            epsilon_param(
                "Guarantee for one count of sensitivity 1 (e^ε rounded down to m/2^32).",
                high=32,
                low=mpq(1, 1 << 10),
            ),
        )
    )
    conformance_cases = ({"n": 5, "epsilon": mpq(1, 2)}, {"n": 40, "epsilon": 1})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int = self.params["n"]
        self.d: int = TABLE_SIZE
        self.exp_epsilon = exp_lower(self.params["epsilon"], _DENOMINATOR_BITS)
        num, den = int(self.exp_epsilon.numerator), int(self.exp_epsilon.denominator)
        self.weights = w = _build(self.n, num, den)
        _verify(w, num, den)
        radius = len(w.decreasing) - 1
        centre = np.array(w.decreasing[:0:-1] + w.decreasing, dtype=np.int64)
        self._radius = radius
        self._centre_start = w.fold + w.plateau * w.plateau_len
        self._centre_cum = self._centre_start + np.cumsum(centre)
        self.derived = {
            "exp_epsilon": self.exp_epsilon,
            "w0": w.decreasing[0],
            "radius": radius,
            "plateau": w.plateau,
            "fold": w.fold,
        }

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, 0, COUNT_SENSITIVITY_1)

    def _cumulative(self, j: int) -> int:
        """C(j) = Σ_{i ≤ j} W(i)."""
        n, r, w = self.n, self._radius, self.weights
        if j < -n:
            return 0
        if j < -r:
            return w.fold + (j + n) * w.plateau
        if j <= r:
            return int(self._centre_cum[j + r])
        if j < n:
            return int(self._centre_cum[-1]) + (j - r) * w.plateau
        return TABLE_SIZE

    def _noise(self, u0: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Z̃ = the smallest j with C(j) > u0, for u0 uniform in [0, 2^63): one binary search in
        the central table, then plateau arithmetic for the few u0 outside it."""
        n, r, w = self.n, self._radius, self.weights
        centre_end = int(self._centre_cum[-1])
        noise: npt.NDArray[np.int64] = np.searchsorted(self._centre_cum, u0, side="right") - r
        outside = np.flatnonzero((u0 < self._centre_start) | (u0 >= centre_end))
        if outside.size:
            v = u0[outside]
            left = -(n - 1) + (v - w.fold) // w.plateau
            right = r + 1 + (v - centre_end) // w.plateau
            noise[outside] = np.where(
                v < w.fold,
                -n,
                np.where(
                    v < self._centre_start,
                    left,
                    np.where(v < centre_end + w.plateau * w.plateau_len, right, n),
                ),
            )
        return noise

    def _output(self, count: int, u: int) -> int:
        j = int(self._noise(np.array([u - 1], dtype=np.int64))[0])
        return min(max(count + j, 0), self.n)

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        return TABLE_SIZE if z >= self.n else self._cumulative(z - count)

    def _noise_variance(self, count: int) -> float:
        """Σ W(j)·clamp(j, −c, n − c)^k / 2^63 run by run: the decreasing weights one by one,
        the plateau by integer power sums, the rest of each side on its clamped end."""
        w, n = self.weights, self.n
        top = len(w.decreasing) - 1
        noise = ClampedNoise(count, n)
        noise.point(0, mpq(w.decreasing[0], TABLE_SIZE))
        for sign, reach in ((-1, count), (1, n - count)):
            for j in range(1, min(reach, top + 1)):
                noise.point(sign * j, mpq(w.decreasing[j], TABLE_SIZE))
            plateau = integer_power_sums(top + 1, min(reach - 1, n - 1))
            noise.run(mpq(w.plateau, TABLE_SIZE), plateau, sign)
            beyond = sum(w.decreasing[max(reach, 1) :]) + w.fold
            beyond += w.plateau * max(0, n - max(reach, top + 1))
            noise.point(sign * reach, mpq(beyond, TABLE_SIZE))
        return noise.variance

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        u0 = source.bits_array(TABLE_BITS, counts.size).view(np.int64)  # < 2^63: no copy
        noisy: npt.NDArray[np.int64] = np.clip(counts + self._noise(u0), 0, self.n)
        return noisy

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest a with Pr[|Z̃| > a] = 2·(2^63 − C(a))/2^63 ≤ β (Z̃ is symmetric; clamping
        only shrinks errors)."""

        def tail(a: int) -> Any:
            return mpq(2 * (TABLE_SIZE - self._cumulative(a)), TABLE_SIZE)

        bound = ErrorBound(smallest_error_bound(tail, beta, cap=self.n), beta)
        return Accuracy(bound, bound, formula="smallest a with 2·Σ_{j>a} W(j) ≤ β·2^63")
