"""Contract 6, accuracy: the declared (a, β) bounds hold.

Each kind's probe lists its declared bounds as claims. A claim whose failure probability is known
exactly (a sampler's worst tail over every count of a small case, a selector's keep probability
at its declared threshold) must be at most β, on a grid of βs from 1/2 to 10⁻⁶
(:data:`~.probes.base.EXACT_BETAS`), on the declared cases and, for samplers and selectors, on
the cases generated from the schema (:mod:`.generated`; their sampled claims are not drawn).
The others, at β = 1/20 and 1/1000 on the declared cases, are tested on seeded samples with a
one-sided binomial test (H₀: failure rate ≤ β) whose false-alarm rate is split by Bonferroni
over them; each draws enough samples to see a failure rate of f·β with
probability at least 1/2 (:mod:`.power`; f is 2 in a full run, 4 by default and 6 in a fast one),
or fails for want of power.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.checks import run_checks
from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.power import detectable_factor, trials_for
from dpplug.conformance.probes import exhaustive, generated_probes, probes
from dpplug.conformance.probes.base import ExactClaim, Probe, SampledClaim
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import Entry
from dpplug.surfaces import Dimension

NAME = "accuracy"


def check(entry: Entry, settings: Settings) -> ContractResult:
    plot: dict[str, Any] = {}
    exact = generated = 0
    sampled: list[tuple[Probe, SampledClaim]] = []
    declared = list(probes(entry))
    extra = generated_probes(entry, settings) if exhaustive(entry) else []
    for probe in [*declared, *extra]:
        for claim in probe.accuracy_claims(settings):
            if isinstance(claim, SampledClaim):
                if probe in declared:
                    sampled.append((probe, claim))
                continue
            exact += 1
            generated += probe not in declared
            if failure := _exact_failure(claim):
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {failure}")
        if probe in declared:
            plot = plot or probe.accuracy_plot(settings)
    failure, cells = run_checks(declared, NAME, settings)
    if failure is not None:
        return ContractResult(NAME, Outcome.FAILED, failure)
    alpha = settings.false_alarm / max(1, len(sampled))
    weakest = 1.0
    for probe, claim in sampled:
        beta = float(claim.beta)
        trials = max(claim.trials, trials_for(beta, alpha, settings.detected_factor))
        if trials > claim.max_trials:
            return ContractResult(
                NAME,
                Outcome.FAILED,
                f"{probe.where}, {claim.what}: no power: seeing a failure rate of "
                f"{settings.detected_factor:g}β at β = {claim.beta} needs {trials} draws, more "
                f"than the {claim.max_trials} this case affords; declare a case whose law is "
                "exact or cheaper to draw",
            )
        misses = claim.misses(trials)
        p_value = float(binom.sf(misses - 1, trials, beta))
        if p_value < alpha:
            return ContractResult(
                NAME,
                Outcome.FAILED,
                f"{probe.where}, {claim.what} in {misses}/{trials} draws, too many for "
                f"β = {claim.beta} (p = {p_value:.1e} < {alpha:.1e})",
            )
        weakest = max(weakest, detectable_factor(trials, beta, alpha))
        cells += [cell(s, d, Status.SAMPLED, claim.what) for s, d in claim.covers]
    parts = (
        [f"{exact} declared bounds hold exactly ({generated} on generated cases)"] if exact else []
    )
    if sampled:
        parts.append(
            f"{len(sampled)} binomial tests passed (reject below {alpha:.1e}); each sees a "
            f"failure rate of {weakest:.2g}·β with probability ≥ 1/2"
        )
    power = f"{weakest:.2g}β" if sampled else "any"
    status = Status.SAMPLED if sampled else Status.EXACT
    return ContractResult(
        NAME,
        Outcome.PASSED,
        "; ".join(parts),
        data=plot,
        power=power,
        weakness=weakest if sampled else 0.0,
        cells=(cell("accuracy", Dimension.NUMBERS, status, "; ".join(parts)), *cells),
    )


def _exact_failure(claim: ExactClaim) -> str | None:
    beta = mpq(claim.beta.numerator, claim.beta.denominator)
    if claim.probability <= beta:
        return None
    return f"{claim.what} has probability {float(claim.probability):.3g} > β = {claim.beta} (exact)"
