"""The sampler kind: counting-query samplers (Balcer & Vadhan, "Differential Privacy on Finite
Computers", Def. 4.1–4.3), a deterministic M(c, u) for a true count c ∈ [0, n] and randomness
u ∈ [1, d], with its scaled CDF and exact pmf.

Plugins subclass :class:`CountingQuerySampler`, implement its ``_``-methods and register the
class through :func:`register_samplers`. The guarantee is stated for counts that differ by at most
the sampler's sensitivity (:attr:`~dpplug.guarantee.Relation.COUNT`). In OpenDP a sampler is a
measurement on one integer with ``absolute_distance``; in PipelineDP it is the noise of COUNT,
PRIVACY_ID_COUNT and ``add_dp_noise``. ``docs/kinds.md`` is the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.data import integer_array, integer_scalar
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import BadParameter, NotSupported, PluginFault
from dpplug.guarantee import LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import DataForm, Kind, PipelineRole, ReleaseForm
from dpplug.mechanism import Mechanism
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface

#: The default precision (bits) of :meth:`CountingQuerySampler.enclosed_law`.
ENCLOSURE_BITS = 128
#: Count bound of samplers that accept any integer (noise addition, no clamping).
UNBOUNDED_COUNT = 1 << 62
#: The largest exact law :meth:`CountingQuerySampler.pmf` builds: outputs × bits of d.
MAX_LAW_BITS = 1 << 26


def law_size_check(sampler: CountingQuerySampler, outputs: int) -> None:
    """Refuse an exact law of *outputs* rationals over d (up to 2·log₂ d bits each) that would
    exceed :data:`MAX_LAW_BITS`, before computing any of it."""
    bits = outputs * max(sampler.d.bit_length() if sampler.d else 64, 64)
    if bits > MAX_LAW_BITS:
        raise NotSupported(
            f"the exact law of {sampler.name} here has {outputs:,} outputs with denominators of "
            f"{sampler.d.bit_length() if sampler.d else 64:,} bits (about {bits >> 23:,} MiB; "
            f"the limit is {MAX_LAW_BITS >> 23} MiB): exact laws are for small parameters such "
            f"as the conformance cases; use sample() for draws and accuracy() for tail bounds"
        )


class CountingQuerySampler(Mechanism):
    """A counting-query sampler: M(c, u) for c ∈ [0, n], u ∈ [1, d].

    ``epsilon`` is the sampler's own guarantee for one counting query of sensitivity 1. Bounded
    samplers have a finite ``n`` and ``d``. Unbounded ones (noise addition on any integer) set
    ``n = None``; samplers without a finite randomness size set ``d = None`` and offer only
    :meth:`sample` and :meth:`pmf`.

    Required of a plugin:

    - ``n`` and ``d`` (instance attributes), and the :class:`Mechanism` declarations;
    - with a finite d: :meth:`_output` (count, u) → M(count, u) and :meth:`_scaled_cdf`
      (z, count) → d·Pr[M(count, U) ≤ z];
    - without a finite n and d: :meth:`_pmf` (count) → the exact law of M(count, U) as a
      :class:`~dpplug.pmf.Pmf` (a bounded sampler gets it from :meth:`_scaled_cdf`, or
      overrides it with a closed form), or, where its probabilities are irrational, :meth:`_pmf`
      raising :class:`~dpplug.errors.NotSupported` and :meth:`_enclosed_law` (count, bits) →
      rigorous bounds on them (an :class:`~dpplug.enclosed_law.EnclosedLaw`);
    - optionally :meth:`_sample` (a faster vectorised path with the same law).

    The public methods validate their input first, so bad input is refused before any draw.
    """

    n: int | None
    d: int | None

    @property
    def count_bounds(self) -> tuple[int, int]:
        """The true counts this sampler accepts."""
        if self.n is None:
            return (-UNBOUNDED_COUNT, UNBOUNDED_COUNT)
        return (0, self.n)

    def _count(self, count: object) -> int:
        return integer_scalar(count, *self.count_bounds, what=f"{self.name} count")

    def _randomness_size(self) -> int:
        if self.d is None:
            raise NotSupported(
                f"{self.name} has no finite randomness size d, so M(c, u) and its scaled CDF do "
                f"not exist; use sample() and pmf(), or a bounded sampler such as geosample"
            )
        return self.d

    def __call__(self, count: object, u: object) -> int:
        """M(count, u): the output for true count *count* and randomness *u* ∈ [1, d]."""
        d = self._randomness_size()
        c = self._count(count)
        return self._output(c, integer_scalar(u, 1, d, what="randomness u"))

    def scaled_cdf(self, z: object, count: object = 0) -> int:
        """F(count, z) = d·Pr[M(count, U) ≤ z], an exact integer; non-decreasing in z."""
        self._randomness_size()
        c = self._count(count)
        return self._scaled_cdf(integer_scalar(z, -UNBOUNDED_COUNT, UNBOUNDED_COUNT, "z"), c)

    def pmf(self, count: object) -> Pmf:
        """The exact law of M(count, U) (output → rational probability)."""
        return self._pmf(self._count(count))

    def enclosed_law(self, count: object, bits: int = ENCLOSURE_BITS) -> EnclosedLaw:
        """Rigorous bounds on the law of M(count, U) at *bits* bits of precision: for each output
        of a finite window an interval of rationals containing its probability, and a bound on
        the mass outside the window (:class:`~dpplug.enclosed_law.EnclosedLaw`). It is the exact
        pmf with zero width for samplers that have one; samplers whose probabilities are
        irrational (the discrete Gaussian) implement :meth:`_enclosed_law` instead of
        :meth:`_pmf`, and the conformance suite decides their guarantee from it
        (docs/conformance.md#enclosed-laws)."""
        if isinstance(bits, bool) or not isinstance(bits, int) or bits < 16:
            raise BadParameter(f"enclosed_law needs bits ≥ 16 (an int), got {bits!r}")
        return self._enclosed_law(self._count(count), bits)

    def noise_std(self, count: object) -> float:
        """The standard deviation of M(count, U), a float for reports (PipelineDP's
        ``count_noise_stddev``): from the exact law, or from a closed form where the sampler has
        one (so it costs little even when the law has 2^40 outputs)."""
        return math.sqrt(self._noise_variance(self._count(count)))

    def sample(self, counts: object, source: RandomSource | None = None) -> npt.NDArray[np.int64]:
        """Noisy counts for an integer array of true counts (same shape), drawn from *source*.

        *source* defaults to the OS CSPRNG. Counts are validated before anything is drawn.
        """
        array = integer_array(counts, *self.count_bounds, what=f"{self.name} counts")
        rng = default_source(source)
        flat = array.reshape(-1)
        return self._sample(flat, rng).reshape(array.shape)

    def _output(self, count: int, u: int) -> int:
        """M(count, u); samplers with a finite d must implement it."""
        raise PluginFault(f"{self.name} declares d = {self.d} but does not implement _output")

    def _scaled_cdf(self, z: int, count: int) -> int:
        """F(count, z); samplers with a finite d must implement it."""
        raise PluginFault(f"{self.name} declares d = {self.d} but does not implement _scaled_cdf")

    def _pmf(self, count: int) -> Pmf:
        """The exact law of M(count, U) for a validated count. A bounded sampler (finite n and
        d) gets it from differences of its scaled CDF, Pr[M = z] = (F(count, z) − F(count,
        z − 1))/d, as scipy's ``rv_discrete`` derives a pmf from a cdf; an unbounded one, or one
        with a closed form, implements it."""
        if self.n is None or self.d is None:
            raise PluginFault(
                f"{self.name} has no finite n and d to derive its law from, so it must "
                "implement _pmf"
            )
        law_size_check(self, self.n + 1)
        cdf = [self._scaled_cdf(z, count) for z in range(-1, self.n + 1)]
        return Pmf({z: mpq(cdf[z + 1] - cdf[z], self.d) for z in range(self.n + 1)})

    def _enclosed_law(self, count: int, bits: int) -> EnclosedLaw:
        """The enclosed law of M(count, U): by default the exact pmf (width 0)."""
        return EnclosedLaw.of_pmf(self._pmf(count))

    def _noise_variance(self, count: int) -> float:
        """Var[M(count, U)] from :meth:`pmf`, geometric tails beyond its window summed in closed
        form. Samplers whose exact law is large override it with a closed form."""
        law = self._pmf(count)
        mass, first, second = mpq(0), mpq(0), mpq(0)
        for z, p in law.items():
            mass, first, second = mass + p, first + p * (z - count), second + p * (z - count) ** 2
        if law.tail_ratio is not None:
            r = law.tail_ratio
            # Σ_{j≥1} j^k r^j for k = 0, 1, 2
            s0, s1, s2 = r / (1 - r), r / (1 - r) ** 2, r * (1 + r) / (1 - r) ** 3
            for edge, sign in ((law.high, 1), (law.low, -1)):  # outputs edge ± j, j ≥ 1
                p, a = law[edge], edge - count
                mass += p * s0
                first += p * (a * s0 + sign * s1)
                second += p * (a * a * s0 + 2 * sign * a * s1 + s2)
        if mass != 1:
            raise PluginFault(f"{self.name}: its law sums to {mass}, not 1")
        return float(second - first * first)

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        """Exact reference path: M(c, U(d)) element by element (expected time, via U(d), drawn
        together by :meth:`~dpplug.randomness.RandomSource.uniforms`)."""
        d = self._randomness_size()
        return np.fromiter(
            map(self._output, counts.tolist(), source.uniforms(d, counts.size)),
            dtype=np.int64,
            count=counts.size,
        )


@hookspec
def register_samplers(register: Register) -> None:
    """Register counting-query samplers: ``register(cls)`` for each subclass of
    :class:`dpplug.CountingQuerySampler`."""


class SamplerKind(Kind):
    """The sampler kind (see the module docstring)."""

    name = "sampler"
    hookspec = staticmethod(register_samplers)
    base = CountingQuerySampler
    relations = (Relation.COUNT,)
    data_form = DataForm.COUNT
    pipeline_role = PipelineRole.COUNT_NOISE
    summary = "a counting-query sampler: a noisy count for a true count"
    surfaces = (
        Surface(
            "sample",
            "noisy counts for an array of true counts (OpenDP's and PipelineDP's route)",
            (
                Dimension.LAW,
                Dimension.BATCH,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        Surface(
            "M(c, u)",
            "the output for true count c and randomness u, the scaled CDF F(c, z), and "
            "probability_at_most(z, c) where a sampler declares it",
            (Dimension.LAW, Dimension.SIZE),
            applies=lambda sampler: _sampler(sampler).d is not None,
        ),
        Surface(
            "pmf",
            "the exact law of M(c, U) (or its enclosure, for irrational probabilities)",
            (Dimension.RELATIONS, Dimension.SIZE),
        ),
        Surface(
            "noise_std",
            "the standard deviation PipelineDP reports as count_noise_stddev",
            (Dimension.NUMBERS,),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "count_bounds": "the counts accepted, from n (bad-input checks both ends)",
        "scaled_cdf": "part of the M(c, u) surface",
        "enclosed_law": "part of the pmf surface",
        "n": "declared (declaration)",
        "d": "declared (declaration)",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        for attribute in ("n", "d"):
            value = getattr(mechanism, attribute, "missing")
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                problems.append(f"{attribute} must be None or an int ≥ 1, got {value!r}")
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """Counts *distance* apart are ⌈distance / sensitivity⌉ neighbouring steps apart."""
        guarantee = mechanism.guarantee
        if isinstance(distance, bool) or not isinstance(distance, int) or distance < 0:
            raise BadParameter(f"an absolute distance is a non-negative int, got {distance!r}")
        return guarantee.group(-(-distance // guarantee.neighbouring.sensitivity))

    def release_form(self, mechanism: Mechanism) -> ReleaseForm:
        """One noisy count, an int64 (what :meth:`CountingQuerySampler.sample` returns)."""
        return ReleaseForm.COUNT

    def apply(self, mechanism: Mechanism, data: Any, source: RandomSource | None = None) -> int:
        sampler = _sampler(mechanism)
        return int(sampler.sample(np.array([sampler._count(data)], dtype=np.int64), source)[0])


def _sampler(mechanism: Mechanism) -> CountingQuerySampler:
    assert isinstance(mechanism, CountingQuerySampler), mechanism
    return mechanism


SAMPLER = SamplerKind()
CountingQuerySampler.kind = SAMPLER
