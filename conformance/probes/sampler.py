"""The probe of the sampler kind: counts in, noisy counts out.

Neighbours are counts ``sensitivity`` apart and the guarantee is the sampler's own. The exact
privacy check (:func:`sampler_privacy`) compares the pmfs of every neighbouring pair of counts
the sampler accepts; accuracy is the exact worst tail over every count where n is small, a
binomial test otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.divergence import WorstCase
from dpplug.conformance.probes.base import (
    BETAS,
    Claim,
    DataSpace,
    ExactClaim,
    PrivacyCheck,
    Probe,
    SampledClaim,
    array_hygiene,
    bad_count_arrays,
    count_inputs,
    count_space,
    quantile_plot,
)
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds import CountingQuerySampler
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource

Rat = Any  # gmpy2.mpq

#: Counts checked for samplers without a count bound (noise addition on every integer).
UNBOUNDED_COUNTS = (-3, 3)


@dataclass(frozen=True)
class PrivacyReport:
    """The outcome of :func:`sampler_privacy`.

    ``counts`` is the inclusive range of true counts checked and ``pairs`` the number of
    neighbouring pairs (each checked in both directions). ``worst_ratio`` is the largest
    likelihood ratio over all pairs and outputs (``None`` means infinite, as for k-TSGD, whose
    extreme outputs have no counterpart); ``worst_divergence`` the largest hockey-stick divergence
    at ``guarantee.exp_epsilon`` over pairs and directions. A pure guarantee passes iff
    ``worst_ratio ≤ exp_epsilon``; an approximate one iff ``worst_divergence ≤ delta``; both also
    need every pmf to sum to exactly 1. ``failures`` says what failed, in words.
    """

    mechanism: str
    guarantee: Guarantee
    counts: tuple[int, int]
    pairs: int
    totals_exact: bool
    worst_ratio: Rat | None
    worst_ratio_pair: tuple[int, int] | None
    worst_divergence: Rat
    worst_divergence_pair: tuple[int, int] | None
    passed: bool
    failures: tuple[str, ...]


def sampler_privacy(
    sampler: CountingQuerySampler, unbounded_counts: tuple[int, int] = UNBOUNDED_COUNTS
) -> PrivacyReport:
    """Check a sampler's declared guarantee exactly over its neighbouring counts.

    Counts are every c in [0, n] for a bounded sampler and *unbounded_counts* (inclusive) for a
    sampler without a count bound. Neighbours are counts at most ``sensitivity`` apart
    (``Relation.COUNT``), each pair checked in both directions: the max likelihood ratio against
    ``guarantee.exp_epsilon`` for a pure guarantee, the hockey-stick divergence at
    ``exp_epsilon`` against ``guarantee.delta`` for an approximate one. Every pmf must sum to
    exactly 1.
    """
    guarantee = sampler.guarantee
    neighbouring = guarantee.neighbouring
    if neighbouring.relation is not Relation.COUNT:
        raise ValueError(
            f"{sampler.name} states its guarantee for {neighbouring.describe()}; "
            f"sampler_privacy checks counting-query samplers (Relation.COUNT)"
        )
    low, high = (0, sampler.n) if sampler.n is not None else unbounded_counts
    pmfs = {c: sampler.pmf(c) for c in range(low, high + 1)}
    failures = [
        f"pmf({c}) sums to {pmf.total()}, not 1" for c, pmf in pmfs.items() if pmf.total() != 1
    ]
    worst = WorstCase(guarantee.exp_epsilon)
    pairs = [
        (c, c + j) for j in range(1, neighbouring.sensitivity + 1) for c in range(low, high - j + 1)
    ]
    for c, c2 in pairs:
        worst.compare(c, c2, pmfs[c], pmfs[c2])
    failures += worst.failures(guarantee, "counts")
    return PrivacyReport(
        mechanism=sampler.name,
        guarantee=guarantee,
        counts=(low, high),
        pairs=len(pairs),
        totals_exact=all(pmf.total() == 1 for pmf in pmfs.values()),
        worst_ratio=worst.ratio,
        worst_ratio_pair=worst.ratio_pair,
        worst_divergence=worst.divergence,
        worst_divergence_pair=worst.divergence_pair,
        passed=not failures,
        failures=tuple(failures),
    )


def exact_worst_tail(sampler: CountingQuerySampler, a: int, max_n: int) -> Any | None:
    """max_c Pr[|M(c,U) − c| > a] over every count, exactly; None if not exactly computable
    (no pmf, or n > *max_n*)."""
    if sampler.n is None:
        counts: range = range(-3, 4)
    elif sampler.n <= max_n:
        counts = range(sampler.n + 1)
    else:
        return None
    try:
        pmfs = [(c, sampler.pmf(c)) for c in counts]
    except NotSupported:
        return None
    return max(1 - sum((pmf.prob(z) for z in range(c - a, c + a + 1)), mpq(0)) for c, pmf in pmfs)


class SamplerProbe(Probe):
    """A counting-query sampler: counts in, noisy counts out."""

    @property
    def sampler(self) -> CountingQuerySampler:
        return cast(CountingQuerySampler, self.mechanism)

    @property
    def inputs(self) -> tuple[int, ...]:
        n = self.sampler.n
        return (-1, 0, 1) if n is None else tuple(sorted({0, n // 2, n}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Counts ``sensitivity`` apart at the low end, the middle and the high end."""
        n, step = self.sampler.n, self.sampler.guarantee.neighbouring.sensitivity
        if n is None:
            return ((0, step),)
        starts = sorted({0, max(0, n // 2 - step // 2), max(0, n - step)})
        return tuple((c, c + step) for c in starts if c + step <= n)

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        return np.asarray(self.sampler.sample(np.full(size, value, dtype=np.int64), source))

    def law(self, value: int) -> Pmf:
        return self.sampler.pmf(value)

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        sampler = self.sampler
        if sampler.n is not None and sampler.n > settings.max_exact_n:
            raise NotSupported(f"n > {settings.max_exact_n} is too large to enumerate")
        report = sampler_privacy(sampler)
        if report.guarantee.pure:
            worst = "∞" if report.worst_ratio is None else f"{float(report.worst_ratio):.6g}"
            summary = f"ratio {worst} ≤ e^ε = {float(report.guarantee.exp_epsilon):.6g}"
        else:
            summary = f"divergence {float(report.worst_divergence):.3g} ≤ δ"
        return PrivacyCheck(report.failures, summary)

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """Per β: the exact worst tail over every count, or a binomial test at each input."""
        claims: list[Claim] = []
        for beta in BETAS:
            a = self.sampler.accuracy(beta).per_query.a
            tail = exact_worst_tail(self.sampler, a, settings.max_exact_n)
            if tail is not None:
                claims.append(ExactClaim(f"Pr[|error| > {a}] over every count", tail, beta))
                continue
            for j, count in enumerate(self.inputs):
                seed = settings.seed + 10 * j + BETAS.index(beta)
                misses = partial(self._misses, count, a, settings.samples, seed)
                what = f"count {count}: |error| > a={a}"
                claims.append(SampledClaim(what, beta, settings.samples, misses))
        return claims

    def _misses(self, count: int, a: int, size: int, seed: int) -> int:
        noisy = self.draw(count, size, SeededSource(seed))
        return int(np.count_nonzero(np.abs(noisy - count) > a))

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        """Declared a against the empirical (1 − β)-quantile of the error at the middle input."""
        count = self.inputs[len(self.inputs) // 2]
        errors = np.abs(self.draw(count, settings.samples, SeededSource(settings.seed)) - count)
        claims = {beta: self.sampler.accuracy(beta).per_query.a for beta in BETAS}
        return quantile_plot(f"{self.where}, count {count}", errors, claims)

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        sampler = self.sampler
        low, high = sampler.count_bounds
        calls: list[tuple[str, Callable[[], object]]] = []
        for counts in bad_count_arrays(low, high):
            calls.append((f"sample({counts!r})", partial(sampler.sample, counts, source)))
            calls.append((f"pmf({counts!r})", partial(sampler.pmf, counts)))
        if sampler.d is not None:
            for u in (0, sampler.d + 1, 1.0):
                calls.append((f"M(0, u={u!r})", partial(sampler, 0, u)))
            calls.append(("M(count=n+1, 1)", partial(sampler, high + 1, 1)))
        return calls

    def data_space(self) -> DataSpace:
        return count_space(self.sampler.sample, *self.sampler.count_bounds)

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        sampler = self.sampler
        low, high = sampler.count_bounds if sampler.n is not None else (-5, 5)
        return array_hygiene(
            sampler.sample,
            self._output_problems,
            lambda a, b: bool(np.array_equal(a, b)),
            count_inputs(low, high, seed),
            strict,
            seed,
        )

    def _output_problems(self, counts: npt.NDArray[np.int64], out: Any) -> list[str]:
        if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu":
            return [f"outputs are {getattr(out, 'dtype', type(out))}, not integers"]
        problems = [] if out.shape == counts.shape else [f"output shape {out.shape}"]
        n = self.sampler.n
        if n is not None and (out.min() < 0 or out.max() > n):
            problems.append(f"outputs outside [0, {n}]")
        return problems

