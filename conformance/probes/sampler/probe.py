"""The probe of the sampler kind: counts in, noisy counts out.

Neighbours are counts ``sensitivity`` apart and the guarantee is the sampler's own. The exact
privacy check (:func:`sampler_privacy`) compares the pmfs of every neighbouring pair of counts
the sampler accepts; accuracy is the exact worst tail over every count where n is small, a
binomial test otherwise.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, partial
from itertools import pairwise
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.bounded_replay import REPLAY_BUDGET, replay_against
from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.divergence import (
    ENCLOSURE_PRECISIONS,
    WorstCase,
    enclosed_hockey_stick,
    enclosed_ratio,
    exact_text,
)
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.arrays import (
    LARGE_CALL,
    TAIL_CALL,
    aliasing_problems,
    class_tests,
    form_problems,
    lag_tests,
    tail_problems,
)
from dpplug.conformance.probes.base import (
    BETAS,
    EXACT_BETAS,
    Call,
    Check,
    Claim,
    DataSpace,
    ExactClaim,
    LawTest,
    Probe,
    SampledClaim,
    array_hygiene,
    bad_count_arrays,
    count_inputs,
    count_space,
    large_counts,
    power_edges,
    quantile_plot,
)
from dpplug.conformance.replay import (
    ImplementationMismatch,
    implementation_law,
    one_element_law,
)
from dpplug.conformance.settings import Settings
from dpplug.errors import BadParameter, NotSupported
from dpplug.exact import Rat, smallest_at_least
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds import UNBOUNDED_COUNT, CountingQuerySampler
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension

#: Counts checked for samplers without a count bound (noise addition on every integer).
UNBOUNDED_COUNTS = (-3, 3)
#: Counts besides the ends and the middle whose implementation is replayed in a larger case.
REPLAYED_COUNTS = 4
#: Cases with at most this n are sampled at every count.
EVERY_COUNT = 8
#: The largest a whose tail is computed exactly for a sampler without a count bound.
MAX_EXACT_A = 1 << 12
#: The most draws a sampled accuracy claim may take (the sampler is vectorised).
MAX_TRIALS = 4_000_000


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


def enclosed_privacy(
    sampler: CountingQuerySampler, unbounded_counts: tuple[int, int] = UNBOUNDED_COUNTS
) -> PrivacyCheck:
    """The declared guarantee decided rigorously from the sampler's enclosed laws
    (:meth:`~dpplug.kinds.CountingQuerySampler.enclosed_law`) over every neighbouring pair of the
    counts :func:`sampler_privacy` checks, in both directions.

    An approximate guarantee passes when every pair's upper bound on the hockey-stick divergence
    at e^ε (:func:`~dpplug.conformance.divergence.enclosed_hockey_stick`) is at most δ, and fails
    only when some pair's *lower* bound exceeds δ; a pure one likewise with the likelihood ratio
    against e^ε (:func:`~dpplug.conformance.divergence.enclosed_ratio`). In between the
    enclosures are recomputed at the next of :data:`ENCLOSURE_PRECISIONS`; a guarantee still
    undecided at the last is not checked (``NotSupported``), never guessed.
    """
    guarantee = sampler.guarantee
    e, delta = guarantee.exp_epsilon, guarantee.delta
    low, high = (0, sampler.n) if sampler.n is not None else unbounded_counts
    step = guarantee.neighbouring.sensitivity
    pairs = [(c, c + j) for j in range(1, step + 1) for c in range(low, high - j + 1)]
    for bits in ENCLOSURE_PRECISIONS:
        laws = {c: sampler.enclosed_law(c, bits) for c in range(low, high + 1)}
        bounds: list[tuple[Any, Any, tuple[int, int]]] = []
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                if guarantee.pure:
                    lower, upper = enclosed_ratio(laws[x], laws[y])
                    bounds.append((lower, upper, (x, y)))
                else:
                    bounds.append((*enclosed_hockey_stick(laws[x], laws[y], e), (x, y)))
        limit = e if guarantee.pure else delta
        for lower, _, (x, y) in bounds:
            if lower is None or lower > limit:
                what = "likelihood ratio" if guarantee.pure else "hockey-stick divergence"
                shown = "∞" if lower is None else exact_text(lower)
                return PrivacyCheck(
                    (
                        f"the {what} for counts {x} and {y} is at least {shown} (a rigorous lower "
                        f"bound from its enclosed laws at {bits} bits), above "
                        f"{'e^ε' if guarantee.pure else 'δ'} = {exact_text(limit)}",
                    ),
                    "",
                )
        uppers = [upper for _, upper, _ in bounds]
        if all(upper is not None and upper <= limit for upper in uppers):
            worst = float(max(uppers))
            what = "ratio" if guarantee.pure else "divergence"
            return PrivacyCheck(
                (),
                f"{what} ≤ {worst:.3g} ≤ {'e^ε' if guarantee.pure else 'δ'} from enclosed laws "
                f"at {bits} bits ({len(pairs)} pairs of counts, both directions)",
            )
    raise NotSupported(
        f"the enclosed laws of {sampler.name} at {ENCLOSURE_PRECISIONS[-1]} bits leave its "
        f"guarantee undecided (their bounds straddle the declared one)"
    )


def exact_worst_tails(
    sampler: CountingQuerySampler, bounds: list[int], max_n: int
) -> list[Any | None] | None:
    """max_c Pr[|M(c,U) − c| > a] over every count, exactly, for each a in *bounds* (the pmfs
    computed once); None if not exactly computable (no pmf, or n > *max_n*), and None for an a
    above :data:`MAX_EXACT_A` of a sampler without a count bound (whose tail is a power of that
    order of its ratio)."""
    if sampler.n is None:
        counts: range = range(UNBOUNDED_COUNTS[0], UNBOUNDED_COUNTS[1] + 1)
    elif sampler.n <= max_n:
        counts = range(sampler.n + 1)
    else:
        return None
    try:
        pmfs = [(c, sampler.pmf(c)) for c in counts]
    except NotSupported:
        return None
    return [
        None if sampler.n is None and a > MAX_EXACT_A else max(_tail(pmf, c, a) for c, pmf in pmfs)
        for a in bounds
    ]


def _tail(pmf: Pmf, count: int, a: int) -> Any:
    """Pr[|Z − count| > a] exactly: the window's outputs farther than a, and the geometric tails
    beyond both the window and a."""
    inside = sum((p for z, p in pmf.items() if abs(z - count) > a), mpq(0))
    ratio = pmf.tail_ratio
    if ratio is None:  # a bounded law
        return inside
    above = pmf.prob(max(pmf.high, count + a) + 1) / (1 - ratio)
    below = pmf.prob(min(pmf.low, count - a) - 1) / (1 - ratio)
    return inside + above + below


class SamplerProbe(Probe):
    """A counting-query sampler: counts in, noisy counts out."""

    call_surfaces = ("sample",)
    law_surface = "pmf"

    exhaustive = True

    @property
    def sampler(self) -> CountingQuerySampler:
        return cast(CountingQuerySampler, self.mechanism)

    @cached_property
    def exact_law(self) -> bool:
        """Whether the sampler has an exact pmf (else it declares an enclosed law only)."""
        try:
            self.sampler.pmf(self.inputs[0])
        except NotSupported:
            return False
        return True

    @property
    def inputs(self) -> tuple[int, ...]:
        """Every count of a small case; both ends and the middle of a larger one."""
        n = self.sampler.n
        if n is None:
            return (-1, 0, 1)
        return tuple(range(n + 1)) if n <= EVERY_COUNT else tuple(sorted({0, n // 2, n}))

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

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """The exact pmf, or for a sampler with an enclosed law only the law inside it nearest
        to its lower bounds (:meth:`~dpplug.enclosed_law.EnclosedLaw.nearest_pmf`) with the
        enclosure's width as its distance."""
        if self.exact_law:
            return self.law(value), 0
        enclosed = self.sampler.enclosed_law(value)
        return enclosed.nearest_pmf(value), enclosed.width()

    def small(self, settings: Settings) -> bool:
        n = self.sampler.n
        if n is not None and n > settings.max_exact_n // 4:
            return False
        if not self.exact_law:  # its enclosed law must be narrow enough to compute
            try:
                self.sampler.enclosed_law(0)
            except NotSupported:
                return False
        return True

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """For every count of a small case: the scaled CDF against the pmf, M(c, u) against the
        scaled CDF (every u where that is cheap, else the u at every step of the CDF and
        random ones), and the law of ``sample`` (replayed) against the pmf."""
        sampler = self.sampler
        if not self.exact_law:
            return self._bounded_replay()
        counts = self._exact_counts(settings)
        problems: list[str] = []
        replayed, code_tv = 0, 0.0
        for count in counts:
            declared = sampler.pmf(count)
            if sampler.d is not None:
                found, spot_tv = _cdf_problems(sampler, count, declared, settings.seed)
                problems += found
                code_tv = max(code_tv, spot_tv)
            try:
                replay = implementation_law(
                    partial(_sample_one, sampler, count),
                    seed=settings.seed,
                    splits=partial(_cdf_steps, sampler, count),
                )
            except NotSupported:
                continue
            except ImplementationMismatch as exc:
                problems.append(f"sample() at count {count}: {exc}")
                continue
            replayed += 1
            code_tv = max(code_tv, replay.code_tv)
            outputs = cast(dict[int, Any], replay.law)
            if outputs != {z: p for z, p in declared.items() if p}:
                worst = max(
                    outputs.keys() | set(declared),
                    key=lambda z: abs(outputs.get(z, 0) - declared.prob(z)),
                )
                problems.append(
                    f"sample() at count {count} draws output {worst} with probability "
                    f"{outputs.get(worst, 0)}, but pmf({count}) declares {declared.prob(worst)}"
                )
            if problems:
                break
        parts, cells = [], []
        if sampler.d is not None:
            parts.append(f"M(c, u) and F against the pmf at {len(counts)} counts")
            cells.append(cell("M(c, u)", Dimension.LAW, Status.EXACT, parts[-1]))
        if replayed:
            parts.append(f"sample() replayed exactly at {replayed} counts")
            cells.append(cell("sample", Dimension.LAW, Status.EXACT, parts[-1]))
        return PrivacyCheck(tuple(problems[:1]), "; ".join(parts), code_tv, tuple(cells))

    def _bounded_replay(self) -> PrivacyCheck:
        """``sample()`` at each of :attr:`inputs` replayed against the enclosed law down to a
        budget of path probability
        (:func:`~dpplug.conformance.bounded_replay.replay_against`)."""
        sampler, worst = self.sampler, mpq(0)
        for count in self.inputs:
            call = partial(_sample_one, sampler, count)
            what = f"sample() at count {count}"
            try:
                failure, unexplored = replay_against(call, sampler.enclosed_law(count), what)
            except NotSupported as exc:
                return PrivacyCheck((), f"sample() not replayed: {exc}", 1.0)  # nothing seen
            if failure is not None:
                return PrivacyCheck((failure,), "")
            worst = max(worst, unexplored)
        return PrivacyCheck(
            (),
            f"sample() replayed against its enclosed law at {len(self.inputs)} counts down to "
            f"path probability {exact_text(REPLAY_BUDGET)} (a deviation of total variation above "
            f"the unexplored mass {float(worst):.2g} is seen)",
            float(worst),
        )

    def _exact_counts(self, settings: Settings) -> list[int]:
        """The counts whose implementation is replayed: every count of a tiny case; else both
        ends, their neighbours, the middle and :data:`REPLAYED_COUNTS` seeded others (a flaw
        that shows at a few counts only is at an end or where the code branches on the count,
        which the exact privacy check sees through the pmf)."""
        n = self.sampler.n
        if n is None:
            return list(range(UNBOUNDED_COUNTS[0], UNBOUNDED_COUNTS[1] + 1))
        if n > settings.max_exact_n:
            raise NotSupported(f"n > {settings.max_exact_n} is too large to enumerate")
        if n <= EVERY_COUNT:
            return list(range(n + 1))
        ends = {0, 1, 2, n // 2, n - 2, n - 1, n}
        others = [c for c in range(n + 1) if c not in ends]
        chosen = random.Random(settings.seed).sample(others, min(REPLAYED_COUNTS, len(others)))
        return sorted(ends | set(chosen))

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        sampler = self.sampler
        if sampler.n is not None and sampler.n > settings.max_exact_n:
            raise NotSupported(f"n > {settings.max_exact_n} is too large to enumerate")
        if not self.exact_law:
            return enclosed_privacy(sampler)
        report = sampler_privacy(sampler)
        if report.guarantee.pure:
            worst = "∞" if report.worst_ratio is None else f"{float(report.worst_ratio):.6g}"
            summary = f"ratio {worst} ≤ e^ε = {float(report.guarantee.exp_epsilon):.6g}"
        else:
            summary = f"divergence {float(report.worst_divergence):.3g} ≤ δ"
        return PrivacyCheck(report.failures, summary)

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """The exact worst tail over every count at each β of :data:`EXACT_BETAS` where it can
        be computed, else, at the βs of :data:`BETAS`, a binomial test at each input."""
        sampler = self.sampler
        bounds = {beta: a for beta in EXACT_BETAS if (a := _declared_a(sampler, beta)) is not None}
        tails = exact_worst_tails(sampler, list(bounds.values()), settings.max_exact_n)
        claims: list[Claim] = []
        for i, (beta, a) in enumerate(bounds.items()):
            tail = None if tails is None else tails[i]
            if tail is not None:
                claims.append(ExactClaim(f"Pr[|error| > {a}] over every count", tail, beta))
                continue
            if beta not in BETAS:
                continue
            for j, count in enumerate(self.inputs):
                seed = settings.seed + 10 * j + BETAS.index(beta)
                misses = partial(self._misses, count, a, seed)
                what = f"count {count}: |error| > a={a}"
                claims.append(SampledClaim(what, beta, settings.samples, misses, MAX_TRIALS))
        return claims

    def _misses(self, count: int, a: int, seed: int, size: int) -> int:
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

    def calls(self, seed: int) -> list[Call]:
        low, high = self._hygiene_range()
        return [
            Call(f"sample({label} counts)", partial(self.sampler.sample, counts), (counts,))
            for label, counts in count_inputs(low, high, seed).items()
        ]

    def large_calls(self, seed: int) -> list[Call]:
        counts = large_counts(*self._hygiene_range(), seed)
        return [
            Call(f"sample({counts.size} counts)", partial(self.sampler.sample, counts), (counts,))
        ]

    def _hygiene_range(self) -> tuple[int, int]:
        sampler = self.sampler
        return sampler.count_bounds if sampler.n is not None else (-5, 5)

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        sampler = self.sampler
        low, high = self._hygiene_range()
        return array_hygiene(
            sampler.sample,
            self._output_problems,
            lambda a, b: bool(np.array_equal(a, b)),
            count_inputs(low, high, seed),
            strict,
            seed,
        )

    # Along the other cells of the surface × dimension matrix.

    def _classes(self) -> list[int]:
        """The counts of the large mixed call (:func:`~..arrays.class_tests`): both ends, their
        neighbours and the middle; without a count bound, counts up to the largest accepted
        (near 2^31, 2^32, 2^53 and 2^62, both signs)."""
        n = self.sampler.n
        if n is not None:
            return sorted({0, 1, n // 2, max(0, n - 1), n})
        top = UNBOUNDED_COUNT - (1 << 10)
        huge = [(1 << 31) - 1, 1 << 31, (1 << 32) + 1, (1 << 53) + 1, top]
        return [0, 1, -1, *huge, *(-c for c in huge)]

    def law_tests(self, settings: Settings) -> list[LawTest]:
        """The large mixed call's classes, and independence of outputs of one large call."""
        sampler, what = self.sampler, f"{self.where}: sample()"
        middle = self.inputs[len(self.inputs) // 2]
        return [
            *class_tests("sample", what, sampler.sample, self._classes(), self.tested_law, 1),
            *lag_tests("sample", what, sampler.sample, middle, self.tested_law, 2),
        ]

    def checks(self, settings: Settings) -> list[Check]:
        sampler = self.sampler
        low, high = self._hygiene_range()
        counts = count_inputs(low, high, settings.seed)["mixed"][:4, :4]
        middle = self.inputs[len(self.inputs) // 2]
        checks = [
            Check(
                (("sample", Dimension.LAW), ("sample", Dimension.SIZE)),
                "sampling-law",
                Status.SAMPLED,
                f"the far tails of one call of {TAIL_CALL} counts, exact binomial tests",
                lambda s: tail_problems(
                    sampler.sample, middle, *self.tested_law(middle), s.seed, s.false_alarm
                ),
            ),
            Check(
                (("sample", Dimension.FORMS),),
                "hygiene",
                Status.CHECKED,
                "the same counts in every form",
                lambda s: form_problems(sampler.sample, counts, _same_array, s.seed),
            ),
            Check(
                (("sample", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "an integer array of the input's shape, the caller's own",
                lambda s: aliasing_problems(sampler.sample, _arrays, counts, s.seed),
            ),
            Check(
                (("sample", Dimension.SIZE),),
                "exact-privacy",
                Status.EXACT,
                f"one element of a call of {LARGE_CALL} counts (or {KIND_PATH_CALL} on the kind's "
                "element-by-element path), its draw explored exactly with "
                "the others fixed",
                lambda s: _element_problems(self, s.seed),
            ),
            Check(
                (("sample", Dimension.SIZE),),
                "accuracy",
                Status.SAMPLED,
                f"calls of {BOUNDARY_CALL} copies of one count at and below 2^15, 2^16, 2^31, "
                "2^32, 2^53 and 2^62, each output within the declared a at β ≤ 10⁻¹⁸",
                lambda s: self._boundary_problems(s.seed),
            ),
            Check(
                (("noise_std", Dimension.NUMBERS),),
                "accuracy",
                Status.EXACT,
                "noise_std against the standard deviation of the exact law",
                lambda s: self._std_problems(),
            ),
        ]
        if sampler.d is not None:
            checks.append(
                Check(
                    (("accuracy", Dimension.SIZE),),
                    "accuracy",
                    Status.EXACT,
                    "the declared a at every β of the exact grid, at n up to the schema's limit, "
                    "against the exact tail at the middle count",
                    lambda s: self._large_n_accuracy_problems(),
                )
            )
            checks.append(
                Check(
                    (
                        ("M(c, u)", Dimension.SIZE),
                        ("pmf", Dimension.SIZE),
                        ("sample", Dimension.SIZE),
                    ),
                    "exact-privacy",
                    Status.EXACT,
                    "M(c, u), F and sample() at n up to the schema's limit",
                    lambda s: self._large_n_problems(s.seed),
                )
            )
        else:
            checks.append(
                Check(
                    (("pmf", Dimension.SIZE),),
                    "exact-privacy",
                    Status.EXACT,
                    "the declared law at counts up to the largest accepted",
                    lambda s: self._huge_count_problems(),
                )
            )
        return checks

    def _std_problems(self) -> list[str]:
        """``noise_std(c)`` against the standard deviation of the declared law at each count
        of the large call (the law's own variance, tails in closed form; for an enclosed law,
        within its width)."""
        sampler = self.sampler
        for count in self._classes():
            declared = sampler.noise_std(count)
            if self.exact_law:
                variance = float(CountingQuerySampler._noise_variance(sampler, count))
            else:
                law = sampler.enclosed_law(count).nearest_pmf(count)
                mean = sum((p * (z - count) for z, p in law.items()), mpq(0))
                second = sum((p * (z - count) ** 2 for z, p in law.items()), mpq(0))
                variance = float(second - mean * mean)
            true = math.sqrt(variance)
            if abs(declared - true) > 1e-9 * max(true, 1.0):
                return [
                    f"noise_std({count}) = {declared:.9g}, but the declared law's standard "
                    f"deviation is {true:.9g} (PipelineDP reports noise_std as the noise's)"
                ]
        return []

    def _boundary_problems(self, seed: int) -> list[str]:
        """Calls of :data:`BOUNDARY_CALL` copies of one count, at and just below each power of
        two where narrow integer code changes type (2^15, 2^16, 2^31, 2^32, 2^53 and 2^62, also
        negated where the counts may be), one count per call, so no larger count in the call
        moves the code to a wide path; on this case and at n up the size ladder. Every output
        must be within the declared a at the largest β ≤ 10⁻¹⁸ the sampler accepts (a correct
        sampler fails with probability at most 12·:data:`BOUNDARY_CALL`·β per case)."""
        for sampler in (self.sampler, *self._large_samplers):
            low, high = sampler.count_bounds
            accepted = [b for b in SIZE_BETAS if b <= BOUNDARY_BETA]
            found = [(b, a) for b in accepted if (a := _declared_a(sampler, b)) is not None]
            if not found:
                continue
            beta, a = max(found)
            edges = power_edges(BOUNDARY_BITS)
            counts = sorted(c for c in edges | {-c for c in edges} if low <= c <= high)
            for count in counts:
                out = sampler.sample(
                    np.full(BOUNDARY_CALL, count, dtype=np.int64), SeededSource(seed)
                )
                worst = max(abs(int(o) - count) for o in np.asarray(out).tolist())
                if worst > a:
                    shown = "" if sampler is self.sampler else f"at n = {sampler.n}, "
                    return [
                        f"{shown}a call of {BOUNDARY_CALL} copies of the count {count} gave an "
                        f"output {worst} away, past the declared a = {a} at β = {beta}"
                    ]
        return []

    def _huge_count_problems(self) -> list[str]:
        """Without a count bound: the declared law at counts up to the largest accepted sums to
        one and is centred where the count is (its mode within the accuracy of it)."""
        sampler = self.sampler
        a = sampler.accuracy(BETAS[0]).per_query.a
        for count in self._classes():
            law, _ = self.tested_law(count)
            if abs(law.total() - 1) > mpq(1, 1 << 60):
                return [f"the law at count {count} sums to {float(law.total())}"]
            mode = max(law, key=law.prob)
            if abs(mode - count) > a:
                return [f"the law at count {count} peaks at {mode}, farther than a = {a}"]
        return []

    def _large_n_problems(self, seed: int) -> list[str]:
        """At n = 2^16, 2^31, 2^53 and the schema's largest (those the schema takes, while d has
        at most :data:`LARGE_N_BITS` bits): F(c, −1) = 0 and F(c, n) = d, and at counts 0, n/2,
        n and a seeded one, M(c, u) is the inverse of F(c, ·) on both sides of the steps next
        to c and at random u among them, and ``sample()`` served that u gives M(c, u) (where it
        draws one U(d), or 2^k bits with d = 2^k), and both at the ends of the draw's range
        (:func:`_tail_problems`)."""
        for sampler in self._large_samplers:
            problems = _points_problems(sampler, seed)
            if problems:
                return [f"at n = {sampler.n}: {problems[0]}"]
        if not self._large_samplers and (self.sampler.n or 0) > MAX_FIXED_N:
            raise NotSupported("the schema takes no n of the size ladder")
        return []  # or n is fixed and small: the exact checks cover every count

    @cached_property
    def _large_samplers(self) -> list[CountingQuerySampler]:
        """The case at each n of the size ladder the schema takes (while d has at most
        :data:`LARGE_N_BITS` bits after the first)."""
        made: list[CountingQuerySampler] = []
        for n in _size_ladder(self.sampler):
            try:
                sampler = self.sampler.registry_in_use().create(
                    self.sampler.name, **{**self.params, "n": n}
                )
            except BadParameter:
                continue
            if not isinstance(sampler, CountingQuerySampler) or sampler.d is None:
                continue  # unbounded at this n: the huge-count checks cover it
            if made and sampler.d.bit_length() > LARGE_N_BITS:
                break
            made.append(sampler)
        return made

    def _large_n_accuracy_problems(self) -> list[str]:
        """At each n of the size ladder, the declared a(β) at every β of :data:`SIZE_BETAS`
        against the exact probability that the output at the middle count c = ⌊n/2⌋ (where
        clamping to [0, n] helps least) is farther than a from c: (F(c, c − a − 1) + d −
        F(c, c + a))/d. At a small n the bound is capped by n; at a large one it is not."""
        if not self._large_samplers:
            raise NotSupported("the schema takes no n of the size ladder")
        for sampler in self._large_samplers:
            n, d = sampler.n, sampler.d
            assert n is not None and d is not None
            count = n // 2
            for beta in SIZE_BETAS:
                a = _declared_a(sampler, beta)
                if a is None:
                    continue
                below = sampler.scaled_cdf(count - a - 1, count) if count - a - 1 >= -1 else 0
                above = sampler.scaled_cdf(count + a, count) if count + a < n else d
                tail = mpq(below + d - above, d)
                if tail > mpq(beta.numerator, beta.denominator):
                    return [
                        f"at n = {n}, count {count}: the declared a = {a} at β = {beta} fails "
                        f"with probability {float(tail):.3g} > β (exact)"
                    ]
        return []

    def _output_problems(self, counts: npt.NDArray[np.int64], out: Any) -> list[str]:
        if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu":
            return [f"outputs are {getattr(out, 'dtype', type(out))}, not integers"]
        problems = [] if out.shape == counts.shape else [f"output shape {out.shape}"]
        n = self.sampler.n
        if n is not None and (out.min() < 0 or out.max() > n):
            problems.append(f"outputs outside [0, {n}]")
        return problems


def _declared_a(sampler: CountingQuerySampler, beta: Any) -> int | None:
    """The declared a at *beta*; None at a β beyond :data:`BETAS` the sampler cannot promise
    (its ``accuracy`` refuses it)."""
    try:
        return int(sampler.accuracy(beta).per_query.a)
    except BadParameter:
        if beta in BETAS:
            raise
        return None


#: The boundary check: its call's size, the largest β it reads a at, and the powers of two.
BOUNDARY_CALL = 1024
BOUNDARY_BETA = Fraction(1, 10**18)
BOUNDARY_BITS = (15, 16, 31, 32, 53, 62)
#: The call whose last element is explored when the sampler keeps the kind's batch path.
KIND_PATH_CALL = 1031
#: The βs the declared accuracy is checked at on the size ladder: the exact grid and every
#: power of ten from 10⁻⁷ to 10⁻³⁰ (a bound off by a constant factor is hidden at a β where
#: rounding a down absorbs it, and seen at most others).
SIZE_BETAS = (*EXACT_BETAS, *(Fraction(1, 10**k) for k in range(7, 31)))
#: The law of M(c, ·) is tallied over every u when (n + 1)·d is at most this; otherwise M is
#: compared with the inverse of the scaled CDF on both sides of every step and at RANDOM_U
#: random u per count.
ENUMERATE_U = 1 << 18
RANDOM_U = 2000
#: The share of the u on which a deviation of M(c, ·) is seen with probability 1/2 by RANDOM_U
#: random points (about 3.5e-4).
RANDOM_SHARE = 1 - 2 ** (-1 / RANDOM_U)


def _sample_one(sampler: CountingQuerySampler, count: int, source: RandomSource) -> int:
    return int(sampler.sample(np.array([count], dtype=np.int64), source)[0])


def _cdf_steps(sampler: CountingQuerySampler, count: int, draw: tuple[str, int]) -> list[int]:
    """Where the output of ``sample`` should change as its uniform draw on [1, d] grows: the
    scaled CDF's values (an inverse-CDF sampler's steps); nothing for other draws."""
    if sampler.d is None or draw != ("uniform", sampler.d):
        return []
    low, high = sampler.count_bounds
    return [sampler.scaled_cdf(z, count) for z in range(low, high + 1)]


def _cdf_problems(
    sampler: CountingQuerySampler, count: int, declared: Pmf, seed: int
) -> tuple[list[str], float]:
    """The scaled CDF F(count, ·) against the pmf (and ``probability_at_most``, where a sampler
    declares that closed form, against F/d), and M(count, ·) against the pmf: its law
    over every u where d is small, else M(count, u) against the inverse of F; and the smallest
    total variation of a deviation of M(count, ·) that this sees with probability at least 1/2
    (0 where every u is run; :data:`RANDOM_SHARE` where d is too large)."""
    d, n = sampler.d, sampler.count_bounds[1]
    assert d is not None
    cdf = [sampler.scaled_cdf(z, count) for z in range(-1, n + 1)]
    if cdf[0] != 0 or cdf[-1] != d:
        ends = f"F({count}, −1) = {_shown_u(cdf[0])} and F({count}, n) = {_shown_u(cdf[-1])}"
        return [f"{ends}, not 0 and d = {_shown_u(d)}"], 0.0
    for z in range(n + 1):
        mass = mpq(cdf[z + 1] - cdf[z], d)
        if mass != declared.prob(z):
            return [
                f"F({count}, ·) gives output {z} probability {mass}, pmf({count}) "
                f"{declared.prob(z)}"
            ], 0.0
    closed = getattr(sampler, "probability_at_most", None)  # read by histograms' error bounds
    if callable(closed):
        for z in range(-1, n + 1):
            if mpq(closed(z, count)) != mpq(cdf[z + 1], d):
                return [
                    f"probability_at_most({z}, {count}) = {mpq(closed(z, count))}, but "
                    f"F({count}, {z})/d = {mpq(cdf[z + 1], d)}: the closed form error bounds "
                    "read is not the sampler's law"
                ], 0.0
    if (n + 1) * d <= ENUMERATE_U:  # the law of M(count, ·) over every u
        tally = [0] * (n + 1)
        for u in range(1, d + 1):
            tally[sampler(count, u)] += 1
        for z in range(n + 1):
            if mpq(tally[z], d) != declared.prob(z):
                return [
                    f"M({count}, u) gives output {z} for {tally[z]} of the d = {d} values of u, "
                    f"but pmf({count}) declares probability {declared.prob(z)}"
                ], 0.0
        return [], 0.0
    # Too many u to enumerate: M(count, ·) must be the inverse of F(count, ·) (non-decreasing
    # in u, as Balcer–Vadhan's samplers are); checked exactly at both sides of every step of F
    # and at random u, which see a deviation on a share f of the u with probability 1 − (1 − f)^R.
    edges = {u for z in range(n + 1) for u in (cdf[z] + 1, cdf[z + 1]) if cdf[z] < cdf[z + 1]}
    rng = np.random.default_rng(seed + count)  # chooses test points only
    width = (d.bit_length() + 7) // 8 + 8  # 64 spare bits: the modulo is near uniform
    pool = rng.bytes(width * RANDOM_U)  # one call: numpy's per-call cost dominated the loop
    randoms = {
        1 + int.from_bytes(pool[i : i + width], "little") % d
        for i in range(0, width * RANDOM_U, width)
    }
    for u in sorted(edges | randoms):
        expected = bisect.bisect_left(cdf, u, lo=1) - 1
        if sampler(count, u) != expected:
            return [
                f"M({count}, u={_shown_u(u)}) = {sampler(count, u)}, but the inverse of its "
                f"scaled CDF gives {expected} (with d = {_shown_u(d)} too large to enumerate, "
                "M(c, ·) must be the inverse of its scaled CDF)"
            ], RANDOM_SHARE
    return [], RANDOM_SHARE


def _element_problems(probe: SamplerProbe, seed: int) -> list[str]:
    """The last element of one large mixed call (:func:`~..replay.one_element_law`): of
    :data:`LARGE_CALL` counts where the sampler has its own batch path, where size-keyed code
    lives; of :data:`KIND_PATH_CALL` where it keeps the kind's element-by-element one (whose
    every element runs the same M(c, U(d)), whatever the call's size)."""
    classes = probe._classes()
    own = type(probe.sampler)._sample is not CountingQuerySampler._sample
    size = LARGE_CALL if own else KIND_PATH_CALL
    values = np.asarray(classes, dtype=np.int64)[np.arange(size) % len(classes)]
    found = one_element_law(probe.sampler.sample, values, _pmf_of(probe.sampler), seed)
    return [] if found is None else [found]


def _pmf_of(sampler: CountingQuerySampler) -> Callable[[int], dict[Any, Any]]:
    def law(count: int) -> dict[Any, Any]:
        return dict(sampler.pmf(count).items())

    return law


def _same_array(a: Any, b: Any) -> bool:
    return isinstance(a, np.ndarray) and a.shape == b.shape and bool(np.array_equal(a, b))


def _arrays(output: Any) -> list[npt.NDArray[Any]]:
    if not isinstance(output, np.ndarray) or output.dtype.kind not in "iu":
        raise TypeError(f"sample() returned {type(output).__name__}, not an integer array")
    return [output]


def _size_ladder(sampler: CountingQuerySampler) -> list[int]:
    """n = 2^16, 2^31, 2^53 and the schema's largest, those above the case's n."""
    high = next((p.high for p in type(sampler).schema if p.name == "n"), None)
    ladder = [1 << 16, 1 << 31, 1 << 53, *([int(high)] if high is not None else [])]
    return sorted({n for n in ladder if high is None or n <= high})


#: A sampler whose schema fixes n at most this large has every count checked exactly already.
MAX_FIXED_N = 64
#: Random u per count in the large-n checks.
LARGE_N_POINTS = 4
#: Steps of F(c, ·) on each side of c checked in the large-n checks.
LARGE_N_STEPS = 2
#: Rungs of the size ladder whose d has more bits than this are not checked (their arithmetic
#: costs seconds per call); the first rung always is.
LARGE_N_BITS = 1 << 20


def _points_problems(sampler: CountingQuerySampler, seed: int) -> list[str]:
    """The large-n checks of :meth:`SamplerProbe._large_n_problems` on one sampler."""
    n, d = sampler.n, sampler.d
    assert n is not None and d is not None
    rng = random.Random(seed)  # chooses test points only
    flip = _orientation(sampler)
    if flip is None:
        return [
            f"sample([{n // 2}]) given a draw u follows neither M({n // 2}, u) nor "
            f"M({n // 2}, d + 1 − u) at the steps of F({n // 2}, ·) near its middle"
        ]
    for count in sorted({0, n // 2, n, rng.randrange(n + 1)}):
        if sampler.scaled_cdf(-1, count) != 0 or sampler.scaled_cdf(n, count) != d:
            return [f"F({count}, −1) and F({count}, n) are not 0 and d"]
        zs = list(range(max(0, count - LARGE_N_STEPS), min(n, count + LARGE_N_STEPS) + 1))
        cdf = [sampler.scaled_cdf(z, count) for z in [zs[0] - 1, *zs]]
        if any(a > b for a, b in pairwise(cdf)):
            return [f"F({count}, ·) decreases between {zs[0] - 1} and {zs[-1]}"]
        points = {u for below, at in pairwise(cdf) if below < at for u in (below + 1, at)}
        points |= {rng.randrange(cdf[0] + 1, cdf[-1] + 1) for _ in range(LARGE_N_POINTS)}
        for u in sorted(points):
            expected = zs[0] + bisect.bisect_left(cdf, u, lo=1) - 1
            found = sampler(count, u)
            if found != expected:
                return [
                    f"M({count}, u={_shown_u(u)}) = {found}, but the inverse of its scaled CDF "
                    f"gives {expected}"
                ]
            served = _served_sample(sampler, count, flip(u))
            if served is not None and served != expected:
                return [
                    f"sample([{count}]) given u = {_shown_u(flip(u))} returned {served}, but "
                    f"M({count}, u) = {expected}"
                ]
        problems = _tail_problems(sampler, count, flip) or _ratio_problems(sampler, count, rng)
        if problems:
            return problems
    return []


def _ratio_problems(sampler: CountingQuerySampler, count: int, rng: random.Random) -> list[str]:
    """For a pure guarantee, the likelihood ratio of outputs z between counts c and c + 1
    (c + 1 ≤ n), exactly from the scaled CDFs (d·Pr[z] = F(c, z) − F(c, z − 1)), at z next to
    c and at both ends of [0, n] and :data:`LARGE_N_POINTS` seeded z: privacy at an n whose
    whole law is too large to enumerate, at sampled points."""
    n, guarantee = sampler.n, sampler.guarantee
    assert n is not None
    if guarantee.delta or count >= n:
        return []
    e = guarantee.exp_epsilon
    zs = {0, 1, n - 1, n, *range(max(0, count - 1), min(n, count + 2) + 1)}
    zs |= {rng.randrange(n + 1) for _ in range(LARGE_N_POINTS)}
    for z in sorted(zs):
        here, there = (
            sampler.scaled_cdf(z, c) - sampler.scaled_cdf(z - 1, c) for c in (count, count + 1)
        )
        if here > e * there or there > e * here:
            ratio = (
                "∞"
                if not min(here, there)
                else f"{float(mpq(max(here, there), min(here, there))):.6g}"
            )
            return [
                f"output {z} has likelihood ratio {ratio} between counts {count} and {count + 1}, "
                f"above e^ε = {float(e):.6g}"
            ]
    return []


def _shown_u(u: int) -> str:
    """A draw (or d) in a message: in full up to 30 digits, else its length and leading digits
    (an integer of thousands of digits can be neither printed nor read)."""
    if u.bit_length() <= 99:
        return str(u)
    top = u >> (u.bit_length() - 99)
    return f"a {u.bit_length()}-bit integer starting {top}…"


def _orientation(sampler: CountingQuerySampler) -> Callable[[int], int] | None:
    """How ``sample()`` maps its draw: u ↦ u (it is M(c, U)) or u ↦ d + 1 − u (M(c, d + 1 − U),
    the same law), found at the steps of F(c, ·) around the middle count's median; None if it
    follows neither there (then its law is held to the pmf by the replay on small cases)."""
    n, d = sampler.n, sampler.d
    assert n is not None and d is not None
    count = n // 2
    zs = range(max(0, count - LARGE_N_STEPS), min(n, count + LARGE_N_STEPS) + 1)
    us = {
        u for z in zs for u in (sampler.scaled_cdf(z, count), sampler.scaled_cdf(z - 1, count) + 1)
    }
    us = {u for u in us if 1 <= u <= d}

    def same(u: int) -> int:
        return u

    def mirrored(u: int) -> int:
        return d + 1 - u

    for flip in (same, mirrored):
        if all(_served_sample(sampler, count, flip(u)) in (None, sampler(count, u)) for u in us):
            return flip
    return None


def _tail_problems(
    sampler: CountingQuerySampler, count: int, flip: Callable[[int], int]
) -> list[str]:
    """M(count, u) and ``sample()`` served u at the ends of the draw's range, u = 1, 2, d − 1
    and d, and on both sides of the steps of F(count, ·) at the ends of the output range, 0
    and n: outputs far in the tails, which code that cuts the search short gets wrong
    (``sample()`` served *flip*(u), its own way of mapping the draw, :func:`_orientation`)."""
    n, d = sampler.n, sampler.d
    assert n is not None and d is not None
    low, high = sampler.scaled_cdf(0, count), sampler.scaled_cdf(n - 1, count)
    named = {"1": 1, "2": 2, "d − 1": d - 1, "d": d, f"F({count}, 0)": low}
    named |= {f"F({count}, 0) + 1": low + 1, f"F({count}, n − 1)": high}
    named[f"F({count}, n − 1) + 1"] = high + 1
    for name, u in named.items():
        if not 1 <= u <= d:
            continue
        # The smallest z in [0, n] with F(count, z) ≥ u (F is non-decreasing).
        expected = smallest_at_least(partial(_cdf_at, sampler, count), 0, n, u)
        for what, found in (
            (f"M({count}, u = {name})", sampler(count, u)),
            (
                f"sample([{count}]) given the draw for u = {name}",
                _served_sample(sampler, count, flip(u)),
            ),
        ):
            if found is not None and found != expected:
                return [
                    f"{what} gave {found}, but the inverse of its scaled CDF gives {expected} "
                    "(a draw at the end of its range, where the output is far in a tail)"
                ]
    return []


def _cdf_at(sampler: CountingQuerySampler, count: int, z: int) -> int:
    return sampler.scaled_cdf(z, count)


def _served_sample(sampler: CountingQuerySampler, count: int, u: int) -> int | None:
    """``sample([count])`` with its one draw answered u (U(d)) or u − 1 (2^k bits with d = 2^k);
    None when it draws otherwise."""
    assert sampler.d is not None
    source = _OneDraw(sampler.d, u)
    try:
        value = int(sampler.sample(np.array([count], dtype=np.int64), source)[0])
    except _OtherDraw:
        return None
    return value if source.served == 1 else None


class _OtherDraw(Exception):
    pass


class _OneDraw(RandomSource):
    """Serves one value: u for U(d), u − 1 for bits(k) with 2^k = d; refuses anything else."""

    def __init__(self, d: int, u: int) -> None:
        super().__init__()
        self.d, self.u, self.served = d, u, 0

    def _take(self, value: int) -> int:
        self.served += 1
        if self.served > 1:
            raise _OtherDraw
        return value

    def uniform(self, d: int) -> int:
        if int(d) != self.d:
            raise _OtherDraw
        return self._take(self.u)

    def bits(self, k: int) -> int:
        if 1 << k != self.d:
            raise _OtherDraw
        return self._take(self.u - 1)

    def uniform_array(self, d: int, size: int) -> npt.NDArray[np.int64]:
        if size != 1:
            raise _OtherDraw
        return np.array([self.uniform(d)], dtype=np.int64)

    def bits_array(self, k: int, size: int) -> npt.NDArray[np.uint64]:
        if size != 1:
            raise _OtherDraw
        return np.array([self.bits(k)], dtype=np.uint64)

    def random_bytes(self, count: int) -> bytes:
        raise _OtherDraw
