"""Contract 5, black-box audit: a statistical lower bound on ε from samples alone, for every
plugin, including those with no exact pmf.

For each conformance case and each neighbouring pair of inputs (both ends and the middle; for a
histogram releaser, datasets one row apart, see :class:`.cases.ReleaserProbe`), in both
directions: on a first batch of samples choose the event E (an output, or all outputs ≥ t, or all
≤ t) that looks most distinguishing; on a fresh batch bound Pr[E | x] from below and Pr[E | x′] from
above with Clopper–Pearson intervals. If DP holds, Pr[E | x] ≤ e^ε·Pr[E | x′] + δ; the contract
fails when lower(Pr[E|x]) − δ > e^ε·upper(Pr[E|x′]). With confidence levels split by Bonferroni
over pairs, directions and the two bounds of each test, a correct mechanism fails with probability
at most ``settings.false_alarm``. The report gives the largest empirical ε lower bound
ln((lower − δ)/upper), and the contract's power: the smallest excess over the declared ε its
sharpest test would detect.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.stats import beta as beta_distribution

from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.probes import probes
from dpplug.conformance.probes.base import Probe
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import Entry
from dpplug.randomness import SeededSource
from dpplug.surfaces import Dimension

NAME = "audit"
#: An event must be seen at least this often in the selection batch to be worth testing.
MIN_HITS = 20


def clopper_pearson(hits: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided (1 − alpha) Clopper–Pearson lower and upper bounds on a binomial proportion."""
    lower = 0.0 if hits == 0 else float(beta_distribution.ppf(alpha, hits, trials - hits + 1))
    upper = (
        1.0 if hits == trials else float(beta_distribution.ppf(1 - alpha, hits + 1, trials - hits))
    )
    return lower, upper


def _events(
    x: npt.NDArray[np.int64], y: npt.NDArray[np.int64], delta: float
) -> tuple[str, int, int] | None:
    """The most distinguishing event for "x versus y" on a selection batch: (kind, threshold)."""
    values = np.union1d(x, y)
    best: tuple[float, tuple[str, int, int]] | None = None
    sorted_x, sorted_y = np.sort(x), np.sort(y)
    for t in values:
        hits = {
            "=": (np.count_nonzero(x == t), np.count_nonzero(y == t)),
            "≥": (x.size - np.searchsorted(sorted_x, t), y.size - np.searchsorted(sorted_y, t)),
            "≤": (np.searchsorted(sorted_x, t, "right"), np.searchsorted(sorted_y, t, "right")),
        }
        for kind, (hx, hy) in hits.items():
            if hx < MIN_HITS:
                continue
            score = (hx / x.size - delta) / ((hy + 1) / y.size)
            if best is None or score > best[0]:
                best = (score, (kind, int(t), int(hx)))
    return None if best is None else best[1]


def _hits(samples: npt.NDArray[np.int64], kind: str, t: int) -> int:
    if kind == "=":
        return int(np.count_nonzero(samples == t))
    if kind == "≥":
        return int(np.count_nonzero(samples >= t))
    return int(np.count_nonzero(samples <= t))


def _detectable_excess(hits: int, trials: int, alpha: float, probe: Probe) -> float:
    """The smallest excess Δ over the declared ε that the test at an event seen *hits* times on
    the neighbour's side would detect, were the other side's rate e^{ε+Δ} times as high."""
    epsilon, delta = probe.guarantee.epsilon, float(probe.guarantee.delta)
    _, upper = clopper_pearson(hits, trials, alpha)

    def fires(excess: float) -> bool:
        shifted = min(trials, math.ceil(math.exp(epsilon + excess) * max(hits, 1)))
        lower, _ = clopper_pearson(shifted, trials, alpha)
        return lower - delta > math.exp(epsilon) * upper

    if not fires(10.0):
        return math.inf
    low, high = 0.0, 10.0
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if fires(middle) else (middle, high)
    return high


def check(entry: Entry, settings: Settings) -> ContractResult:
    plan = [
        (probe, statistic, a, b)
        for probe in probes(entry)
        for statistic in probe.audit_statistics(settings)
        for a, b in (probe.pairs if statistic.pairs is None else statistic.pairs)
    ]
    tests = 2 * len(plan)
    alpha = settings.false_alarm / (2 * tests)  # two bounds per test
    worst = (-math.inf, "")
    cases: dict[str, dict[str, float]] = {}  # per case: declared ε and the largest lower bound
    sharpest = math.inf  # the smallest excess over the declared ε any test would see
    covered: dict[tuple[str, Dimension], str] = {}
    for i, (probe, statistic, a, b) in enumerate(plan):
        case = cases.setdefault(probe.where, {"declared": probe.guarantee.epsilon, "lower": 0.0})
        n = probe.sample_size(settings)
        if statistic.sessions is not None:
            n = min(n, statistic.sessions)
        seed = settings.seed + 1000 * i
        select = {c: statistic.draw(c, n, SeededSource(seed + j)) for j, c in enumerate((a, b))}
        fresh = {c: statistic.draw(c, n, SeededSource(seed + 2 + j)) for j, c in enumerate((a, b))}
        bound, delta = float(probe.guarantee.exp_epsilon), float(probe.guarantee.delta)
        of = f"{statistic.what} " if statistic.what else "out "
        for x, y in ((a, b), (b, a)):
            event = _events(select[x], select[y], delta)
            if event is None:
                continue
            kind, t, _ = event
            lower, _ = clopper_pearson(_hits(fresh[x], kind, t), n, alpha)
            _, upper = clopper_pearson(_hits(fresh[y], kind, t), n, alpha)
            eps_lb = math.log((lower - delta) / upper) if lower > delta else 0.0
            where = (
                f"{probe.where}: P[{of}{kind} {statistic.show(t)} | {probe.show_input(x)}] "
                f"vs | {probe.show_input(y)}"
            )
            if lower - delta > bound * upper:
                return ContractResult(
                    NAME,
                    Outcome.FAILED,
                    f"{where}: ε ≥ {eps_lb:.3f} with confidence 1 − {settings.false_alarm:g}, "
                    f"more than the declared ε = {probe.guarantee.epsilon:.3f}",
                    data={  # the cases so far, this one with its bound: the report plots them
                        "epsilon_lower_bound": eps_lb,
                        "cases": {**cases, probe.where: {**case, "lower": eps_lb}},
                    },
                )
            worst = max(worst, (eps_lb, where))
            case["lower"] = max(case["lower"], eps_lb)
            sharpest = min(sharpest, _detectable_excess(_hits(fresh[y], kind, t), n, alpha, probe))
        for key in statistic.covers:
            covered[key] = f"{statistic.what} audited at neighbouring inputs ({n} draws a side)"
    power = (
        f"; its sharpest test sees an ε {sharpest:.2g} above the declared one"
        if math.isfinite(sharpest)
        else ""
    )
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{tests} tests, up to {max(p.sample_size(settings) for p, *_ in plan)} samples each "
        f"side; largest empirical ε lower bound {max(worst[0], 0.0):.3f} ({worst[1]}){power}",
        data={"epsilon_lower_bound": max(worst[0], 0.0), "cases": cases},
        power=f"Δε {sharpest:.2g}" if math.isfinite(sharpest) else "none",
        weakness=sharpest,
        cells=(
            cell(
                "guarantee",
                Dimension.RELATIONS,
                Status.SAMPLED,
                "a black-box lower bound on ε from real draws at neighbouring inputs",
            ),
            *(cell(*key, Status.SAMPLED, how) for key, how in covered.items()),
        ),
    )
