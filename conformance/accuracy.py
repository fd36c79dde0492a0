"""Contract 6, accuracy: the declared (a, β) bounds hold.

Each kind's probe lists its declared bounds at β = 1/20 and 1/1000 as claims. A claim whose failure
probability is known exactly (a sampler's worst tail over every count of a small case, a
selector's keep probability at its declared threshold) must be at most β. The others are tested
on seeded samples with a one-sided binomial test (H₀: failure rate ≤ β) whose false-alarm rate is
split by Bonferroni over them.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.probes import probes
from dpplug.conformance.probes.base import ExactClaim, Probe, SampledClaim
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import Entry

NAME = "accuracy"


def check(entry: Entry, settings: Settings) -> ContractResult:
    plot: dict[str, Any] = {}
    exact = 0
    sampled: list[tuple[Probe, SampledClaim]] = []
    for probe in probes(entry):
        for claim in probe.accuracy_claims(settings):
            if isinstance(claim, SampledClaim):
                sampled.append((probe, claim))
                continue
            exact += 1
            if failure := _exact_failure(claim):
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {failure}")
        plot = plot or probe.accuracy_plot(settings)
    alpha = settings.false_alarm / max(1, len(sampled))
    for probe, claim in sampled:
        misses = claim.misses()
        p_value = float(binom.sf(misses - 1, claim.trials, float(claim.beta)))
        if p_value < alpha:
            return ContractResult(
                NAME,
                Outcome.FAILED,
                f"{probe.where}, {claim.what} in {misses}/{claim.trials} draws, too many for "
                f"β = {claim.beta} (p = {p_value:.1e} < {alpha:.1e})",
            )
    parts = [f"{exact} declared bounds hold exactly"] if exact else []
    if sampled:
        parts.append(f"{len(sampled)} binomial tests passed (reject below {alpha:.1e})")
    return ContractResult(NAME, Outcome.PASSED, "; ".join(parts), data=plot)


def _exact_failure(claim: ExactClaim) -> str | None:
    beta = mpq(claim.beta.numerator, claim.beta.denominator)
    if claim.probability <= beta:
        return None
    return f"{claim.what} has probability {float(claim.probability):.3g} > β = {claim.beta} (exact)"
