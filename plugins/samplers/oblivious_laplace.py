"""A time-oblivious clamped discrete Laplace sampler: a dyadic alias table made exactly pure DP by
mixing with the uniform law (Kerschbaum, Lee and Wu 2025, the purified sampler L_n^γ built on
Walker's alias method; Balcer & Vadhan, full version Alg. 3.1 / Lemma 3.2 for the mixing;
docs/mechanisms.md#oblivious-laplace).

**Ideal mechanism.** M(c) = clamp(c + Z, 0, n) with Z two-sided geometric,
Pr[Z = j] = ((1 − α)/(1 + α))·α^{|j|}, α = e^{−ε} rounded up to m/2^64, so M is λ-DP for counts
one apart with λ = 1/α ≤ e^ε. Clamping makes every noise value beyond ±n equivalent to ±n, so Z
is folded onto [−n, n] (the tails α^n/(1 + α) on ±n) without changing M.

**Approximation.** The noise Z̃ takes the values of a window [−W, W] with integer weights W_j out
of U: W_j ≤ U·Pr[Z = j] for j ≠ 0 (lower bounds of α^{|j|} carried in fixed point), the rest on
0. W is n, or the smallest window whose two tails beyond it weigh at most δ/2 when that is
smaller (the smallest set of mass 1 − δ/2). So TV(Z̃, Z) = W_0/U − Pr[Z = 0], exactly, and it
is checked to be at most the δ below.

**Purification.** A count draws a column of the alias table (m bits) and a position v in
[0, 2^B) inside it. (n + 1)·2^s positions give the outputs 0 … n, 2^s each (the reference law 𝒟,
uniform on [0, n]), and the other K = 2^B − (n + 1)·2^s give the column's pair of alias
outcomes, clamp(c + j, 0, n), in proportion to the table's units. So with probability
γ = (n + 1)·2^s/2^B, between half the ``gamma`` asked and all of it (B − s =
⌈log₂((n + 1)/γ)⌉), the output is uniform on [0, n], and otherwise it is clamp(c + Z̃, 0, n).
Clamping is post-processing, so TV(clamp(c + Z̃), M(c)) ≤ TV(Z̃, Z) for every c, and
Balcer–Vadhan's Lemma 3.2 makes the mixture exactly λ-DP once TV(Z̃, Z) ≤ δ: for every output z
and counts c, c′ one apart,

    γ𝒟(z) + (1 − γ)(P_c(z) + δ) ≤ λ·(γ𝒟(z) + (1 − γ)(P_{c′}(z) − δ)),

because P_c(z) ≤ λ·P_{c′}(z) (the ideal mechanism) and (1 − γ)·δ·(λ + 1) ≤ (λ − 1)·γ·𝒟(z),
which with 𝒟(z) = 1/(n + 1) reads δ ≤ (λ − 1)·2^s/((λ + 1)·K). The declared guarantee is λ.
The table's resolution 1/(2^m·K) must be about δ/W: the columns (m) and the reference positions
per output (s) share the bits, m as small as the window allows and s the rest.

**Fixed work.** Inside a column the reference positions and the two alias segments are laid out
in increasing order of the output they give (:func:`clamped_mixture`), so the output is found by
a fixed sequence of additions, comparisons, shifts and clamps, non-decreasing in v. Nothing
depends on the count or the output: two draws and the same operations per count
(``strict_time``). The law is exactly dyadic:
Pr[M*(c) = z] = (2^{m+s} + Σ_{j : clamp(c + j) = z} W_j)/2^{m+B}.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import BadParameter, PluginFault
from dpplug.exact import ceil_log2, exp_upper, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.kinds.sampler.base import law_size_check
from dpplug.param_types import RATIONAL
from dpplug.params import Param, Schema, count_bound_param, epsilon_param
from dpplug.plugins.samplers.alias_table import AliasTable, build
from dpplug.plugins.samplers.noise_moments import integer_power_sums
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

Ints = npt.NDArray[np.int64]

_DENOMINATOR_BITS = 64
#: The position v inside a column is one draw of at most this many bits (an int64).
MAX_POSITION_BITS = 63
#: Counts sampled per block (the block's arrays, a few MiB, stay in cache).
BLOCK = 1 << 16
#: The alias table has at most 2^MAX_COLUMN_BITS columns.
MAX_COLUMN_BITS = 20
#: The position draw has at least this many bits (more resolution costs nothing, and a draw too
#: large to enumerate is replayed by bisection, a few runs per output instead of every value).
MIN_POSITION_BITS = 16
#: Guard bits of the fixed-point powers of α (each weight is short by less than 2 units).
_GUARD_BITS = 64


@dataclass(frozen=True)
class Columns:
    """Each column of the alias table as its two noise values in increasing order and the units
    of the smaller one (clamping keeps that order, so it does not depend on the count), with the
    reference positions per output (2^``spread_bits``)."""

    low: Ints
    high: Ints
    low_units: Ints
    capacity: int
    spread_bits: int

    @classmethod
    def of(cls, table: AliasTable, offset: int, spread_bits: int) -> Columns:
        """Column i gives noise i − offset (its own outcome) and alias[i] − offset."""
        own = np.arange(1 << table.column_bits, dtype=np.int64) - offset
        other = table.alias - offset
        low_units = np.where(own > other, table.capacity - table.threshold, table.threshold)
        return cls(
            np.minimum(own, other),
            np.maximum(own, other),
            low_units.astype(np.int64),
            table.capacity,
            spread_bits,
        )


def clamped_mixture(counts: Ints, column: Ints, position: Ints, columns: Columns, n: int) -> Ints:
    """The outputs for true *counts*, alias-table *column* draws and *position* draws in
    [0, (n + 1)·2^s + K): inside a column the 2^s reference positions of each output
    z ∈ [0, n] and the column's two alias segments, clamp(c + j, 0, n), are laid out in
    increasing order of output, each alias segment right after the reference positions of its
    output, and the output is the one whose segment holds the position. A fixed sequence of
    vector operations, whatever the counts and outputs; non-decreasing in the position."""
    s = columns.spread_bits
    low = np.minimum(np.maximum(counts + columns.low[column], 0), n)
    high = np.minimum(np.maximum(counts + columns.high[column], 0), n)
    low_units = columns.low_units[column]
    high_units = columns.capacity - low_units
    low_start = (low + 1) << s
    high_start = ((high + 1) << s) + low_units
    past_low = position >= low_start + low_units
    past_high = position >= high_start + high_units
    spread = (position - low_units * past_low - high_units * past_high) >> s
    in_low = (position >= low_start) & ~past_low
    in_high = (position >= high_start) & ~past_high
    out: Ints = spread + (low - spread) * in_low + (high - spread) * in_high
    return out


def _signed_power_sums(low: int, high: int) -> tuple[int, int]:
    """(Σ j, Σ j²) over low ≤ j ≤ high, exactly, for any integers low ≤ high."""
    if low >= 0:
        _, one, two = integer_power_sums(low, high)
        return one, two
    if high < 0:
        one, two = _signed_power_sums(-high, -low)
        return -one, two
    _, below_one, below_two = integer_power_sums(1, -low)
    _, above_one, above_two = integer_power_sums(0, high)
    return above_one - below_one, above_two + below_two


class ObliviousLaplace(CountingQuerySampler):
    name = "oblivious-laplace"
    summary = (
        "Clamped discrete Laplace from a dyadic alias table mixed with the uniform law: exact "
        "pure DP, two draws and fixed work per count."
    )
    reference = (
        "Kerschbaum, Lee & Wu 2025, purified alias sampler L_n^γ (Walker 1977); Balcer & Vadhan, "
        "Differential Privacy on Finite Computers: Alg. 3.1 / Lemma 3.2"
    )
    strict_time = True
    schema = Schema(
        (
            count_bound_param(
                high=1 << 32, beyond="for larger counts use fixedpoint-geometric (up to 2^40)"
            ),
            epsilon_param(
                "Guarantee for one count of sensitivity 1 (e^−ε rounded up to m/2^64).",
                high=32,
                low=mpq(1, 1 << 10),
            ),
            Param(
                "gamma",
                RATIONAL,
                "Largest weight γ of the uniform law in the mixture (the achieved one is at least "
                "half of it); it costs about γ of accuracy and log₂(1/γ) bits per draw.",
                low=0,
                low_open=True,
                high=mpq(1, 2),
                default=mpq(1, 1 << 20),
                example="1/1000000",
            ),
        )
    )
    conformance_cases = (
        {"n": 4, "epsilon": 1, "gamma": mpq(1, 8)},
        {"n": 6, "epsilon": mpq(1, 2), "gamma": mpq(1, 4)},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int = self.params["n"]
        self.d: int | None = None
        self.alpha = exp_upper(-self.params["epsilon"], _DENOMINATOR_BITS)
        #: B − s = ⌈log₂((n + 1)/γ)⌉: the position bits before the spread bits s are added.
        self._fixed_bits = ceil_log2((self.n + 1) / self.params["gamma"])
        if self._fixed_bits > MAX_POSITION_BITS:
            raise BadParameter(
                f"oblivious-laplace with n = {self.n} and gamma = {self.params['gamma']} needs "
                f"{self._fixed_bits}-bit draws, more than {MAX_POSITION_BITS}: use a larger "
                f"gamma or a smaller n, or fixedpoint-geometric"
            )
        lam = 1 / self.alpha
        #: The largest TV(Z̃, Z) Lemma 3.2 allows, (λ − 1)·2^s/((λ + 1)·K) with
        #: K = 2^s·(2^{B−s} − (n + 1)), the same for every s.
        self.delta = (lam - 1) / ((lam + 1) * ((1 << self._fixed_bits) - self.n - 1))
        self.window = self._window()
        self.table, self.spread_bits, self.total_variation = self._table()
        self.position_bits = self._fixed_bits + self.spread_bits
        self.derived = {
            "alpha": self.alpha,
            "gamma": mpq(self._reference_units, 1 << self.position_bits),
            "window": self.window,
            "column_bits": self.table.column_bits,
            "position_bits": self.position_bits,
            "total_variation": self.total_variation,
            "delta": self.delta,
        }

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(1 / self.alpha, 0, COUNT_SENSITIVITY_1)

    @property
    def _reference_units(self) -> int:
        """The positions of a column that give the uniform law: 2^s per output."""
        return (self.n + 1) << self.spread_bits

    def _window(self) -> int:
        """W: the smallest w ≤ n with 2α^{w+1}/(1 + α) ≤ δ/2 (the folded tails beyond ±w), or n
        (nothing cut off), decided from rigorous enclosures."""
        alpha = self.alpha

        def beyond(w: int) -> Any:
            return lambda lift: 2 * lift(alpha) ** (w + 1) / (1 + lift(alpha))

        return smallest_error_bound(beyond, self.delta / 2, cap=self.n)

    def _weights(self, units: int) -> list[int]:
        """W_j for j = −W … W (index j + W) out of *units*: lower bounds of units·Pr[Z = j] for
        j ≠ 0 from fixed-point powers of α rounded down, the remainder on j = 0."""
        a = int(self.alpha.numerator)
        scale = int(self.alpha.denominator)  # a power of 2
        precision = units.bit_length() + _GUARD_BITS
        power = 1 << precision  # ≤ α^k·2^precision, rounded down at each step
        side = []
        for k in range(1, self.window + 1):
            power = power * a // scale
            share = scale if k == self.n else scale - a  # α^n/(1+α) folds the tail
            side.append(power * share * units // ((scale + a) << precision))
        centre = units - 2 * sum(side)
        return [*reversed(side), centre, *side]

    def _table(self) -> tuple[AliasTable, int, Any]:
        """(table, s, TV(Z̃, Z)): the fewest columns that hold the window, and the fewest spread
        bits s (then more columns, past the draw's bits) whose rounding keeps TV(Z̃, Z) ≤ δ: the
        rounding costs at most 2W units of U = 2^{m+s}·(2^{B−s} − n − 1)."""
        centre = (1 - self.alpha) / (1 + self.alpha)  # Pr[Z = 0] (n ≥ 1)
        lam = 1 / self.alpha
        columns = max(1, ceil_log2(2 * self.window + 1))
        most_spread = MAX_POSITION_BITS - self._fixed_bits
        # About log₂(4W(λ+1)/(λ−1)) bits of resolution in 2^m·2^s; checked exactly below.
        needed = ceil_log2(4 * max(1, self.window) * (lam + 1) / (lam - 1))
        least = max(0, MIN_POSITION_BITS - self._fixed_bits)
        spread = min(most_spread, max(least, needed - columns - 1))
        while columns <= MAX_COLUMN_BITS:
            capacity = (1 << (self._fixed_bits + spread)) - ((self.n + 1) << spread)
            units = capacity << columns
            weights = self._weights(units)
            distance = mpq(weights[self.window], units) - centre
            if distance <= self.delta:
                return build(weights, columns), spread, distance
            if spread < most_spread:
                spread += 1
            else:
                columns += 1
        raise BadParameter(
            f"oblivious-laplace with n = {self.n}, epsilon = {self.params['epsilon']} and gamma "
            f"= {self.params['gamma']} needs an alias table of more than 2^{MAX_COLUMN_BITS} "
            "columns: use a larger epsilon or gamma, or fixedpoint-geometric"
        )

    @cached_property
    def _effective(self) -> list[int]:
        """The units each noise value receives from the table's columns."""
        return self.table.weights()

    @cached_property
    def _columns(self) -> Columns:
        return Columns.of(self.table, self.window, self.spread_bits)

    @property
    def _total(self) -> int:
        """2^{m+B}: the equally likely (column, position) pairs."""
        return 1 << (self.table.column_bits + self.position_bits)

    @property
    def _reference_weight(self) -> int:
        """The (column, position) pairs that give one output through the uniform law."""
        return 1 << (self.table.column_bits + self.spread_bits)

    def _pmf(self, count: int) -> Pmf:
        law_size_check(self, self.n + 1)
        units = [self._reference_weight] * (self.n + 1)
        for index, weight in enumerate(self._effective):
            units[min(max(count + index - self.window, 0), self.n)] += weight
        if sum(units) != self._total:
            raise PluginFault("oblivious-laplace's law does not sum to 1")
        return Pmf({z: mpq(u, self._total) for z, u in enumerate(units)})

    def _noise_variance(self, count: int) -> float:
        """From the table (at most 2W + 1 noise values) and the uniform part in closed form."""
        one, two = _signed_power_sums(-count, self.n - count)
        first, second = self._reference_weight * one, self._reference_weight * two
        for index, weight in enumerate(self._effective):
            offset = min(max(count + index - self.window, 0), self.n) - count
            first, second = first + weight * offset, second + weight * offset * offset
        mean = mpq(first, self._total)
        return float(mpq(second, self._total) - mean * mean)

    def _sample(self, counts: Ints, source: RandomSource) -> Ints:
        """Blocks of :data:`BLOCK` counts, each drawing its columns then its positions (the
        blocks' arrays stay in the processor's cache)."""
        out = np.empty(counts.size, dtype=np.int64)
        for start in range(0, counts.size, BLOCK):
            block = counts[start : start + BLOCK]
            column = source.bits_array(self.table.column_bits, block.size).astype(np.int64)
            position = source.bits_array(self.position_bits, block.size).astype(np.int64)
            out[start : start + BLOCK] = clamped_mixture(
                block, column, position, self._columns, self.n
            )
        return out

    def _accuracy(self, beta: Any) -> Accuracy:
        """The smallest a with max_c Pr[|M*(c) − c| > a] ≤ β, exactly: at count c the error
        exceeds a through the uniform part at the outputs farther than a, and through the noise
        j > a if c + a < n and j < −a if c > a (clamping stops the others), a function of c
        linear between the breakpoints 0, a, a + 1, n − a − 1, n − a and n."""
        weights, w, n = self._effective, self.window, self.n

        def tail(a: int) -> Any:
            side = sum(weights[w + a + 1 :])  # Σ_{j > a} W_j = Σ_{j < −a} W_j (symmetric)

            def at(c: int) -> int:
                far = max(0, c - a) + max(0, n - c - a)
                return self._reference_weight * far + side * ((n - c > a) + (c > a))

            cuts = {c for c in (0, a, a + 1, n - a - 1, n - a, n) if 0 <= c <= n}
            return mpq(max(at(c) for c in cuts), self._total)

        bound = ErrorBound(smallest_error_bound(tail, beta, cap=n), beta)
        return Accuracy(
            bound,
            bound,
            formula="smallest a with max over c of the exact Pr[|M*(c) − c| > a] ≤ β",
        )
