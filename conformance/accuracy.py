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

from dpplug.conformance.cases import describe_case, instances, probe_counts
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.kinds import CountingQuerySampler
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "accuracy"
BETAS = (Fraction(1, 20), Fraction(1, 1000))


def exact_worst_tail(sampler: CountingQuerySampler, a: int) -> Any | None:
    """max_c Pr[|M(c,U) − c| > a] over every count, exactly; None if not exactly computable."""
    if sampler.n is None:
        counts: range = range(-3, 4)
    elif sampler.n <= 64:
        counts = range(sampler.n + 1)
    else:
        return None
    try:
        pmfs = [(c, sampler.pmf(c)) for c in counts]
    except NotSupported:
        return None
    return max(1 - sum((pmf.prob(z) for z in range(c - a, c + a + 1)), mpq(0)) for c, pmf in pmfs)


def _plot_data(
    sampler: CountingQuerySampler, params: dict[str, Any], seed: int, samples: int
) -> dict[str, Any]:
    """Declared a against the empirical (1 − β)-quantile of the error, at the middle count."""
    count = probe_counts(sampler)[len(probe_counts(sampler)) // 2]
    errors = np.abs(sampler.sample([count] * samples, SeededSource(seed)) - count)
    return {
        "case": f"{describe_case(params)}, count {count}",
        "betas": [str(beta) for beta in BETAS],
        "declared_a": [sampler.accuracy(beta).per_query.a for beta in BETAS],
        "empirical_quantile": [float(np.quantile(errors, 1 - float(beta))) for beta in BETAS],
    }


def check(entry: Entry, settings: Settings) -> ContractResult:
    lines: list[str] = []
    plot: dict[str, Any] = {}
    sampled: list[tuple[CountingQuerySampler, dict[str, Any], Fraction, int]] = []
    for params, mechanism in instances(entry):
        if not isinstance(mechanism, CountingQuerySampler):
            return ContractResult(NAME, Outcome.SKIPPED, f"no accuracy check for a {entry.kind}")
        plot = plot or _plot_data(mechanism, params, settings.seed, settings.samples)
        for beta in BETAS:
            a = mechanism.accuracy(beta).per_query.a
            tail = exact_worst_tail(mechanism, a)
            if tail is None:
                sampled.append((mechanism, params, beta, a))
            elif tail > mpq(beta.numerator, beta.denominator):
                return ContractResult(
                    NAME,
                    Outcome.FAILED,
                    f"{describe_case(params)}: Pr[|error| > {a}] = {float(tail):.3g} exceeds "
                    f"β = {beta} (exact)",
                )
            else:
                lines.append(f"a={a} at β={beta}: exact worst tail {float(tail):.2g}")
    tests = sum(len(probe_counts(s)) for s, *_ in sampled)
    alpha = settings.false_alarm / max(1, tests)
    for i, (sampler, params, beta, a) in enumerate(sampled):
        for j, count in enumerate(probe_counts(sampler)):
            noisy = sampler.sample(
                [count] * settings.samples, SeededSource(settings.seed + 10 * i + j)
            )
            misses = int(np.count_nonzero(np.abs(noisy - count) > a))
            p_value = float(binom.sf(misses - 1, settings.samples, float(beta)))
            if p_value < alpha:
                return ContractResult(
                    NAME,
                    Outcome.FAILED,
                    f"{describe_case(params)}, count {count}: {misses}/{settings.samples} errors "
                    f"exceed a={a}, too many for β = {beta} (p = {p_value:.1e} < {alpha:.1e})",
                )
        lines.append(f"a={a} at β={beta}: binomial test passed")
    return ContractResult(NAME, Outcome.PASSED, "; ".join(dict.fromkeys(lines)), data=plot)
