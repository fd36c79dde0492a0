"""Contract 6, accuracy: the declared per-query (a, β) holds.

Where the law is exact and small (a pmf and n ≤ ``max_exact_n``), the worst tail over every count,
max_c Pr[|M(c, U) − c| > a], is computed exactly and compared with β. Otherwise the error rate is
estimated on seeded samples at both ends and the middle and a one-sided binomial test
(H₀: rate ≤ β) rejects at a false-alarm rate split by Bonferroni over its tests.

Histogram releasers are tested on releases of the probe's middle dataset: per query, the error of
each of the first three labels whose true count the declared threshold covers; simultaneously,
the largest error over every label a release shows (all of a dense histogram, the released bins
and the data's labels of a sparse one, the data's labels and a handful of others of a compact
one, which is a weaker event and so still a valid test). A β the releaser cannot promise (its
``accuracy`` raises :class:`~dpplug.errors.BadParameter`) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.cases import Probe, ReleaserProbe, probes, shown_counts
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import BadParameter, NotSupported
from dpplug.guarantee import Accuracy
from dpplug.kinds import CountingQuerySampler, PartitionSelector
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "accuracy"
BETAS = (Fraction(1, 20), Fraction(1, 1000))
#: Per-query accuracy of a releaser is tested on this many labels (the universe's first).
RELEASER_LABELS = 3


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


def _quantile_plot(
    case: str, errors: npt.NDArray[Any], claims: dict[Fraction, int]
) -> dict[str, Any]:
    """Declared a against the empirical (1 − β)-quantile of *errors*, for the report."""
    return {
        "case": case,
        "betas": [str(beta) for beta in claims],
        "declared_a": list(claims.values()),
        "empirical_quantile": [float(np.quantile(errors, 1 - float(beta))) for beta in claims],
    }


def _sampler_plot(probe: Probe, seed: int, samples: int) -> dict[str, Any]:
    """The quantile plot at the middle input."""
    sampler = probe.mechanism
    assert isinstance(sampler, CountingQuerySampler)
    count = probe.inputs[len(probe.inputs) // 2]
    errors = np.abs(probe.draw(count, samples, SeededSource(seed)) - count)
    claims = {beta: sampler.accuracy(beta).per_query.a for beta in BETAS}
    return _quantile_plot(f"{probe.where}, count {count}", errors, claims)


def _selector_check(probe: Probe, seed: int, samples: int) -> tuple[list[str], dict[str, Any]]:
    """Exact: π(threshold + 1) ≥ 1 − β and, where counts are released, their error at
    saturation; plus the keep-probability curve with empirical keep rates for the report."""
    selector = probe.mechanism
    assert isinstance(selector, PartitionSelector)
    problems: list[str] = []
    for beta in BETAS:
        claim = selector.accuracy(beta)
        beta_q = mpq(beta.numerator, beta.denominator)
        if selector.keep_probability(claim.threshold + 1) < 1 - beta_q:
            problems.append(f"π({claim.threshold + 1}) < 1 − β for β = {beta}")
        n = selector.saturation
        law = selector.output_pmf(n)
        if any(z > 1 for z in law):
            a = claim.per_query.a
            miss = sum((p for z, p in law.items() if z != 0 and abs(z - n) > a), mpq(0))
            if miss > beta_q:
                problems.append(f"Pr[|count error| > {a}] = {float(miss):.3g} > β = {beta}")
    units = list(range(selector.saturation + 2))
    plot = {
        "case": probe.where,
        "units": units,
        "keep": [float(selector.keep_probability(n)) for n in units],
        "empirical": {
            n: float(np.mean(probe.draw(n, samples, SeededSource(seed + n)) != 0))
            for n in probe.inputs
        },
    }
    return problems, plot


@dataclass(frozen=True)
class _ReleaserClaim:
    """One declared bound of a releaser: Pr[error > a] ≤ β for *label* (per query), or for the
    largest error over the labels a release shows (``label`` None: simultaneous)."""

    beta: Fraction
    a: int
    label: Any = None

    def describe(self) -> str:
        what = "the largest error" if self.label is None else f"the error of {self.label!r}"
        return f"{what} exceeds a={self.a}"


def _covered(accuracy: Accuracy, count: int) -> bool:
    """Whether the per-query bound covers a true count (threshold 0: every count)."""
    return accuracy.threshold == 0 or count > accuracy.threshold


class _ReleaserTests:
    """The claims a releaser probe is tested on, for its middle dataset."""

    def __init__(self, probe: ReleaserProbe) -> None:
        self.probe = probe
        self.value = probe.inputs[len(probe.inputs) // 2]
        universe = probe.releaser.universe
        data = probe.dataset(self.value)
        labels = [universe.label(i) for i in range(min(RELEASER_LABELS, universe.size))]
        self.truth = {label: data.get(label, 0) for label in labels}
        self.claims: list[_ReleaserClaim] = []
        for beta in BETAS:
            try:
                accuracy = probe.releaser.accuracy(beta)
            except BadParameter:  # a β below what the releaser can promise
                continue
            self.claims += [
                _ReleaserClaim(beta, accuracy.per_query.a, label)
                for label, count in self.truth.items()
                if _covered(accuracy, count)
            ]
            self.claims.append(_ReleaserClaim(beta, accuracy.simultaneous.a))

    def errors(self, size: int, seed: int) -> dict[Any, npt.NDArray[np.int64]]:
        """Per label (and ``None`` for the largest over all shown labels), the absolute errors
        of *size* seeded releases."""
        rows = []
        labels = [*self.truth, *self.probe.spot_labels]
        for release in self.probe.releases(self.value, size, SeededSource(seed)):
            shown = shown_counts(release, labels)
            error = {
                x: abs(shown.get(x, 0) - self.truth.get(x, 0))
                for x in shown.keys() | self.truth.keys()
            }
            rows.append([error[x] for x in self.truth] + [max(error.values())])
        table = np.array(rows, dtype=np.int64).reshape(size, len(self.truth) + 1)
        return {label: table[:, i] for i, label in enumerate([*self.truth, None])}

    def run(self, settings: Settings, seed: int, alpha: float) -> tuple[str | None, dict[str, Any]]:
        """The first claim the binomial test rejects (or None), and the report's plot."""
        size = self.probe.sample_size(settings)
        errors = self.errors(size, seed)
        for claim in self.claims:
            misses = int(np.count_nonzero(errors[claim.label] > claim.a))
            p_value = float(binom.sf(misses - 1, size, float(claim.beta)))
            if p_value < alpha:
                return (
                    f"{self.probe.where}, data {self.probe.show_input(self.value)}: in "
                    f"{misses}/{size} releases {claim.describe()}, too many for β = "
                    f"{claim.beta} (p = {p_value:.1e} < {alpha:.1e})"
                ), {}
        x0 = next(iter(self.truth))
        per_query = {c.beta: c.a for c in self.claims if c.label == x0}
        case = f"{self.probe.where}, label {x0!r} with count {self.truth[x0]}"
        return None, _quantile_plot(case, errors[x0], per_query) if per_query else {}


def check(entry: Entry, settings: Settings) -> ContractResult:
    lines: list[str] = []
    plot: dict[str, Any] = {}
    sampled: list[tuple[Probe, Fraction, int]] = []
    releasers: list[_ReleaserTests] = []
    for probe in probes(entry):
        mechanism = probe.mechanism
        if isinstance(probe, ReleaserProbe):
            releasers.append(_ReleaserTests(probe))
            continue
        if isinstance(mechanism, PartitionSelector):
            problems, curve = _selector_check(probe, settings.seed, settings.samples // 10)
            if problems:
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
            plot = plot or curve
            lines.append("thresholds and count errors hold exactly")
            continue
        assert isinstance(mechanism, CountingQuerySampler)
        plot = plot or _sampler_plot(probe, settings.seed, settings.samples)
        for beta in BETAS:
            a = mechanism.accuracy(beta).per_query.a
            tail = exact_worst_tail(mechanism, a, settings.max_exact_n)
            if tail is None:
                sampled.append((probe, beta, a))
            elif tail > mpq(beta.numerator, beta.denominator):
                return ContractResult(
                    NAME,
                    Outcome.FAILED,
                    f"{probe.where}: Pr[|error| > {a}] = {float(tail):.3g} exceeds "
                    f"β = {beta} (exact)",
                )
            else:
                lines.append(f"a={a} at β={beta}: exact worst tail {float(tail):.2g}")
    tests = sum(len(probe.inputs) for probe, *_ in sampled)
    tests += sum(len(r.claims) for r in releasers)
    alpha = settings.false_alarm / max(1, tests)
    for i, (probe, beta, a) in enumerate(sampled):
        for j, count in enumerate(probe.inputs):
            noisy = probe.draw(count, settings.samples, SeededSource(settings.seed + 10 * i + j))
            misses = int(np.count_nonzero(np.abs(noisy - count) > a))
            p_value = float(binom.sf(misses - 1, settings.samples, float(beta)))
            if p_value < alpha:
                return ContractResult(
                    NAME,
                    Outcome.FAILED,
                    f"{probe.where}, count {count}: {misses}/{settings.samples} errors "
                    f"exceed a={a}, too many for β = {beta} (p = {p_value:.1e} < {alpha:.1e})",
                )
        lines.append(f"a={a} at β={beta}: binomial test passed")
    for i, tests_of in enumerate(releasers):
        failure, curve = tests_of.run(settings, settings.seed + 10 * i, alpha)
        if failure is not None:
            return ContractResult(NAME, Outcome.FAILED, failure)
        plot = plot or curve
        count = len(tests_of.claims)
        lines.append(f"{count} declared bounds (per query and simultaneous): binomial tests passed")
    return ContractResult(NAME, Outcome.PASSED, "; ".join(dict.fromkeys(lines)), data=plot)
