"""Contract 6, accuracy: the declared per-query (a, β) holds.

Where the law is exact and small (a pmf and n ≤ ``max_exact_n``), the worst tail over every count,
max_c Pr[|M(c, U) − c| > a], is computed exactly and compared with β. Otherwise the error rate is
estimated on seeded samples at both ends and the middle and a one-sided binomial test
(H₀: rate ≤ β) rejects at a false-alarm rate split by Bonferroni over its tests.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.cases import Probe, probes
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.kinds import CountingQuerySampler, PartitionSelector
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "accuracy"
BETAS = (Fraction(1, 20), Fraction(1, 1000))


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


def _sampler_plot(probe: Probe, seed: int, samples: int) -> dict[str, Any]:
    """Declared a against the empirical (1 − β)-quantile of the error, at the middle input."""
    sampler = probe.mechanism
    assert isinstance(sampler, CountingQuerySampler)
    count = probe.inputs[len(probe.inputs) // 2]
    errors = np.abs(probe.draw(count, samples, SeededSource(seed)) - count)
    return {
        "case": f"{probe.where}, count {count}",
        "betas": [str(beta) for beta in BETAS],
        "declared_a": [sampler.accuracy(beta).per_query.a for beta in BETAS],
        "empirical_quantile": [float(np.quantile(errors, 1 - float(beta))) for beta in BETAS],
    }


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


def check(entry: Entry, settings: Settings) -> ContractResult:
    lines: list[str] = []
    plot: dict[str, Any] = {}
    sampled: list[tuple[Probe, Fraction, int]] = []
    for probe in probes(entry):
        mechanism = probe.mechanism
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
    return ContractResult(NAME, Outcome.PASSED, "; ".join(dict.fromkeys(lines)), data=plot)
