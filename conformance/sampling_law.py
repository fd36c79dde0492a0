"""Contract 4, sampling law: a mechanism's draws follow its exact law (a sampler's declared pmf,
a selector's output law, a histogram releaser's release law where it can be enumerated, see
:mod:`.release_law`; a releaser without one is skipped).

For every conformance case and probe input (every count of a small sampler; both ends and the
middle otherwise, so clamping is exercised)
Pearson's chi-square test (:mod:`.goodness_of_fit`) runs on fresh seeded samples. The false-alarm
rate of the whole contract is at most ``settings.false_alarm``: half split by Bonferroni over
its tests, half given to the probes' checks of this contract (such as a sampler's exact
binomial tests of its far tails, :func:`~.probes.arrays.tail_problems`). A power check runs
the same test, on the same samples, against a slightly perturbed law (5% of the mass moved
from the lower half of the outputs to the upper half): it must reject, or the test proves
nothing.

A mechanism whose probabilities are irrational (the discrete Gaussian) is tested against an
exact law inside its enclosure (:meth:`~.probes.base.Probe.tested_law`), within total-variation
distance w (the enclosure's width, tail included) of the true law; each test's level is lowered
by N·w (:func:`_level`), so the false-alarm rate stays within its share
(docs/conformance.md#enclosed-laws).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.checks import run_checks
from dpplug.conformance.coverage import Cell, Status, cell
from dpplug.conformance.default_source import SeededSystemSource, as_default
from dpplug.conformance.goodness_of_fit import chi_square_gof, chi_square_power
from dpplug.conformance.probes import probes
from dpplug.conformance.probes.arrays import PAIR_BINS, binned, coarsened, pair_product
from dpplug.conformance.probes.base import LawTest, Probe
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.plugin_registry import Entry
from dpplug.pmf import Pmf
from dpplug.randomness import SeededSource
from dpplug.surfaces import Dimension

NAME = "sampling-law"
#: Total-variation distance of the perturbed law used by the power check.
PERTURBATION = mpq(1, 20)
#: The least probability with which each test must reject that perturbed law
#: (:func:`~.goodness_of_fit.chi_square_power`: from the laws and the sample size, not the seed).
MIN_POWER = 0.5
#: The fewest samples per test: below about this many, the χ² test cannot reject a 5%
#: perturbation at a false-alarm rate near 1e-6 (histogram releasers draw fewer elsewhere).
POWER_SAMPLES = 10_000
#: The longest description of one output the report's law plot receives.
SHOWN_CHARACTERS = 80


def perturbed(pmf: Pmf) -> Pmf:
    """The law with mass η = PERTURBATION moved from a lower part of the outputs to the rest.

    The lower part is the prefix of outputs (the lowest output's tail included) whose mass m is
    closest to 1/2 and at least 2η; it is scaled by 1 − η/m and the rest by 1 + η/(1−m), so the
    total-variation distance is exactly η. Geometric tails keep their ratio, so the result is an
    exact law of the same shape.
    """
    outputs = list(pmf)
    r = pmf.tail_ratio
    mass = mpq(0) if r is None else pmf[outputs[0]] * r / (1 - r)
    best_mass, best_size = mpq(2), 1
    eta = PERTURBATION
    for size, z in enumerate(outputs[:-1], start=1):
        mass += pmf[z]
        feasible = 2 * eta <= mass <= 1 - 2 * eta
        if feasible and abs(mass - mpq(1, 2)) < abs(best_mass - mpq(1, 2)):
            best_mass, best_size = mass, size
    if best_mass > 1:
        raise ValueError("no part of the law has mass in [2η, 1 − 2η] to move")
    lowered = set(outputs[:best_size])
    down, up = 1 - eta / best_mass, 1 + eta / (1 - best_mass)
    probs = {z: pmf[z] * (down if z in lowered else up) for z in outputs}
    return Pmf(probs, tail_ratio=r)


def _size(probe: Probe, settings: Settings) -> int:
    return max(probe.sample_size(settings), POWER_SAMPLES)


def _level(alpha: float, size: int, slack: Any) -> float:
    """The level of a χ² test against a law within total-variation distance *slack* of the
    true one, such that the test's false-alarm rate stays at most *alpha*: coupling each of the
    *size* draws with a draw of the tested law, they all agree except with probability at most
    size·slack, so testing at alpha − size·slack keeps the rate (refused unless that is at least
    alpha/2)."""
    spare = mpq(alpha) - size * mpq(slack)
    if spare < mpq(alpha) / 2:
        raise NotSupported(f"the tested law is too far from the true one ({float(slack):.2e})")
    return math.nextafter(float(spare), 0.0) if slack else alpha


def _tests(entry: Entry, settings: Settings) -> list[LawTest]:
    """Every test: each probe input's law (:meth:`~.probes.base.Probe.law_inputs`), then the
    tests each probe adds along the other cells of the matrix
    (:meth:`~.probes.base.Probe.law_tests`)."""
    tests: list[LawTest] = []
    declared = list(probes(entry))
    for probe in declared:
        for value in probe.law_inputs:
            index = len(tests)

            def sample(seed: int, probe: Probe = probe, value: int = value, i: int = index) -> Any:
                return probe.law_draw(value, _size(probe, settings), SeededSource(seed + i))

            what = f"{probe.where}, input {probe.show_input(value)}"
            law = partial(probe.tested_law, value)
            tests.append(
                LawTest(
                    probe.call_surfaces[0], (Dimension.LAW,), what, sample, law, probe.show_output
                )
            )
    for probe in declared[:1]:  # large calls, on the first declared case (their cost)
        tests += probe.law_tests(settings)
        if probe.law_inputs:
            tests += _default_source_tests(probe, settings, len(tests))
    return tests


#: The least spread (:func:`_spread`) for which two calls are tested for independence.
MIN_SPREAD = mpq(1, 4)


def _default_source_tests(probe: Probe, settings: Settings, index: int) -> list[LawTest]:
    """The first probe input's law, drawn with the source left out (``None``) while a
    :class:`~.default_source.SeededSystemSource` is the default: code that branches on the
    source it is given is tested on the branch callers take (for probes whose inputs have a
    law: not the anonymized releasers', whose laws are tested on whole histograms); and two
    such calls (:func:`_two_calls_test`)."""
    value = probe.law_inputs[0]
    size = _size(probe, settings)

    def sample(seed: int) -> Any:
        with as_default(SeededSystemSource(seed + index)):
            return probe.law_draw(value, size, None)  # type: ignore[arg-type]

    what = f"{probe.where}, input {probe.show_input(value)}, with the default source"
    tests = [
        LawTest(
            probe.call_surfaces[0],
            (Dimension.FORMS,),
            what,
            sample,
            partial(probe.tested_law, value),
            probe.show_output,
        )
    ]
    return tests + _two_calls_test(probe, size, index)


def _two_calls_test(probe: Probe, size: int, index: int) -> list[LawTest]:
    """Two calls with the source left out, at the probe input whose coarsened law is most
    spread: their i-th outputs must be independent (against the product of the coarsened law;
    the power check asks for the rejection of identical calls), so a call that seeds itself
    when given no source is seen. None where every input's law is so concentrated that
    identical calls could not be told from independent ones."""
    spread = {value: _spread(probe.tested_law(value)[0]) for value in probe.inputs}
    value = max(spread, key=lambda v: spread[v])
    if spread[value] < MIN_SPREAD:
        return []
    marginal, slack = probe.tested_law(value)
    ends, bins = coarsened(marginal)

    def pairs(seed: int) -> Any:
        with as_default(SeededSystemSource(seed + index + 1)):
            first = probe.law_draw(value, size // 2, None)  # type: ignore[arg-type]
            second = probe.law_draw(value, size // 2, None)  # type: ignore[arg-type]
        return binned(np.asarray(first), ends) * PAIR_BINS + binned(np.asarray(second), ends)

    def product() -> tuple[Pmf, Any]:
        return pair_product(bins), 2 * slack

    def identical(law: Pmf) -> Pmf:
        """Identical calls, mixed with 1% of the product so that the laws share outputs."""
        return Pmf(
            {
                z: p / 100
                + (99 * bins[z // PAIR_BINS] / 100 if z // PAIR_BINS == z % PAIR_BINS else 0)
                for z, p in law.items()
            }
        )

    what = f"{probe.where}, input {probe.show_input(value)}, with the default source"
    return [
        LawTest(
            probe.call_surfaces[0],
            (Dimension.STATE,),
            f"{what}: two calls (the i-th outputs of each, independent)",
            pairs,
            product,
            alternative=identical,
        )
    ]


def _spread(law: Pmf) -> Any:
    """The probability that two independent outputs fall in different bins of the coarsened
    law."""
    _, bins = coarsened(law)
    return 1 - sum((p * p for p in bins.values()), mpq(0))


def check(entry: Entry, settings: Settings) -> ContractResult:
    try:
        tests = [(test, *test.law()) for test in _tests(entry, settings)]
    except NotSupported as exc:
        raise NotSupported(f"no exact law to test against: {exc}") from None
    declared = list(probes(entry))
    surfaces = declared[0].call_surfaces
    # half the false-alarm rate for the χ² tests, half for the probes' checks of this contract
    halved = replace(settings, false_alarm=settings.false_alarm / 2)
    alpha = halved.false_alarm / max(1, len(tests))
    plot: dict[str, Any] = {}
    worst_p, powered, largest = 1.0, 0, 0
    enclosed = any(slack for *_, slack in tests)
    cells: list[Cell] = []
    for test, law, slack in tests:
        samples = test.sample(settings.seed)
        size = len(samples)
        largest = max(largest, size)
        level = _level(alpha, size, slack)
        fit = chi_square_gof(samples, law, false_alarm=level)
        where = test.what
        if fit.rejected:
            return ContractResult(
                NAME,
                Outcome.FAILED,
                f"{where}: samples do not follow the declared law (χ² = {fit.statistic:.1f}, "
                f"{fit.dof} dof, p = {fit.p_value:.2e} < {alpha:.1e}"
                + (f", {fit.impossible} samples of probability 0" if fit.impossible else "")
                + ")",
            )
        worst_p = min(worst_p, fit.p_value)
        try:
            alternative = (test.alternative or perturbed)(law)
        except ValueError:  # a (nearly) degenerate law: only impossible outputs can be seen
            cells += [cell(test.surface, d, Status.SAMPLED, where) for d in test.dimensions]
            continue
        power = chi_square_power(size, law, alternative, level)
        if power < MIN_POWER:
            return ContractResult(
                NAME,
                Outcome.FAILED,
                f"{where}: no power: the test rejects a law with 5% of its mass moved with "
                f"probability {power:.2f} only, from {size} samples; declare a conformance case "
                "whose law is less concentrated",
            )
        powered += 1
        cells += [cell(test.surface, d, Status.SAMPLED, where) for d in test.dimensions]
        if not plot:
            values, freq = _frequencies(samples)
            plot = {
                "case": where,
                "outputs": values,
                "empirical": freq,
                "declared": [float(law.prob(z)) for z in values],
                "shown": [test.show(z)[:SHOWN_CHARACTERS] for z in values],
            }
    if not powered:
        return ContractResult(
            NAME,
            Outcome.FAILED,
            "no input had a law the power check could "
            "perturb; declare less concentrated conformance cases",
        )
    failure, checked = run_checks(declared, NAME, halved)
    if failure is not None:
        return ContractResult(NAME, Outcome.FAILED, failure)
    cells += [
        cell(s, Dimension.LAW, Status.SAMPLED, f"χ² of real draws, TV {float(PERTURBATION):g}")
        for s in surfaces
    ]
    cells += checked
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{len(tests)} χ² tests of up to {largest} samples, "
        f"smallest p = {worst_p:.2e} "
        f"(reject below {alpha:.1e}"
        + (
            "; enclosed laws: tested inside their enclosures, the level lowered by their width"
            if enclosed
            else ""
        )
        + f"); {powered} of them reject a 5% perturbation",
        data=plot,
        power=f"TV {float(PERTURBATION):g}",
        weakness=float(PERTURBATION),
        cells=tuple(cells),
    )


def _frequencies(samples: npt.NDArray[np.int64]) -> tuple[list[int], list[float]]:
    values, counts = np.unique(samples, return_counts=True)
    return [int(v) for v in values], [float(c) / samples.size for c in counts]
