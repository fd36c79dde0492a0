"""What the contracts ask of a mechanism, whatever its kind: one :class:`Probe` per conformance
case of a plugin.

A probe is the view of one mechanism instance that the statistical and exact contracts share:
integer inputs, integer outputs drawn for an input, the exact law of those outputs, the
neighbouring inputs to compare and the guarantee that comparison must respect. It also answers
the kind-specific questions of the other contracts: the exact privacy check, the accuracy claims
to test, the bad data to refuse, the data a property search may generate, and the hygiene of
real outputs. The contracts are generic drivers of these methods; each kind has one probe module
(:mod:`dpplug.conformance.probes`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

from dpplug.conformance.coverage import Status
from dpplug.conformance.generated import ladder_changes
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.errors import DpplugError
from dpplug.guarantee import Guarantee
from dpplug.mechanism import Mechanism
from dpplug.plugin_registry import Entry
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension
from dpplug.universe import Universe

#: The failure probabilities at which declared accuracy is tested on samples.
BETAS = (Fraction(1, 20), Fraction(1, 1000))
#: The failure probabilities at which a declared accuracy whose failure probability is known
#: exactly is checked: :data:`BETAS` first, then a grid from 1/2 to 10⁻⁶, so a bound overclaimed
#: only between two sampled βs is found, and βs past what floats hold (below 2⁻⁵³, the smallest
#: normal double and the smallest subnormal one), where a bound computed in floating point rounds
#: β or its tail away, and βs of many significant digits that short decimals round up (0.0149,
#: 9/700 and 2^-10), where a bound computed at a rounded β claims too much.
EXACT_BETAS = (
    *BETAS,
    *(Fraction(1, d) for d in (2, 5, 10, 50, 100, 200, 500, 10**4, 10**5, 10**6)),
    *(Fraction(1, 10**e) for e in (18, 40, 320, 400)),
    Fraction(149, 10**4),
    Fraction(9, 700),
    Fraction(1, 1 << 10),
)


def power_edges(bits: tuple[int, ...]) -> set[int]:
    """2^k − 1 and 2^k for each k of *bits*: both sides of the powers of two where chunked or
    narrow integer code changes path."""
    return {c for k in bits for c in ((1 << k) - 1, 1 << k)}


NOT_REPRODUCIBLE = (
    "the same seeded source gave different outputs: randomness comes from somewhere other than "
    "the RandomSource"
)


def instances(entry: Entry) -> Iterator[tuple[dict[str, Any], Mechanism]]:
    """(parameters, instance) for each of the plugin's ``conformance_cases``."""
    for case in entry.cls.conformance_cases:
        yield dict(case), entry.create(**case)


def describe_case(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "no parameters"


@dataclass(frozen=True)
class ExactClaim:
    """A declared accuracy bound whose failure probability is known exactly."""

    what: str
    probability: Any  # mpq: the exact probability that the bound fails
    beta: Fraction


@dataclass(frozen=True)
class SampledClaim:
    """A declared accuracy bound tested on samples: ``misses(trials)`` counts the failures in
    that many seeded draws, which a binomial test compares with β. The contract chooses the
    number of draws (at least ``trials``, enough for its power, at most ``max_trials``)."""

    what: str
    beta: Fraction
    trials: int
    misses: Callable[[int], int]
    max_trials: int
    #: Cells of the surface × dimension matrix the claim covers besides the accuracy's own
    #: (a claim on data chosen to stress a size, say).
    covers: tuple[tuple[str, Dimension], ...] = ()


Claim = ExactClaim | SampledClaim


@dataclass(frozen=True)
class Call:
    """One call of a mechanism on caller data: *run* makes it with a source; *inputs* are the
    caller's objects it is given, which it must leave as they were."""

    what: str
    run: Callable[[RandomSource], object]
    inputs: tuple[object, ...]


@dataclass(frozen=True)
class LawTest:
    """A test of real outputs against an exact law, along cells of the surface × dimension
    matrix (its surface along each of ``dimensions``) (the sampling-law contract runs it with its
    other tests): ``sample(seed)`` makes the calls from seeded sources derived from the run's *seed*
    (tests that read one call share it; the others use their own) and returns the outputs, coded as
    integers; ``law()`` is the law they must follow and a rational bound on its total-variation
    distance to the truth; ``show(z)`` says what the coded output *z* is, for the report;
    ``alternative(law)``, where given, is the flawed law whose rejection the power check asks
    for (by default 5% of the law's mass moved, :func:`~dpplug.conformance.sampling_law.perturbed`).
    """

    surface: str
    dimensions: tuple[Dimension, ...]
    what: str
    sample: Callable[[int], npt.NDArray[np.int64]]
    law: Callable[[], tuple[Pmf, Any]]
    show: Callable[[int], str] = str
    alternative: Callable[[Pmf], Pmf] | None = None


@dataclass(frozen=True)
class Check:
    """An exact or deterministic check along cells of the surface × dimension matrix
    (``covers``: (surface, dimension) pairs), run by the contract named ``contract``:
    ``run(settings)`` returns what is wrong, in words (empty: passed; ``NotSupported``: the cells
    could not be reached, and why), and a passed check covers its cells with ``status``.
    Checks run on the first declared case (their cost: large calls, sizes up to the schema's
    limits); a cheap one (``every_case``) runs on every declared case, whose parameters reach
    branches the first may not (a pre-threshold, a bound)."""

    covers: tuple[tuple[str, Dimension], ...]
    contract: str
    status: Status
    what: str
    run: Callable[[Settings], list[str]]
    every_case: bool = False


@dataclass(frozen=True)
class AuditStatistic:
    """A deterministic function of a mechanism's outputs that the audit compares at neighbouring
    inputs (post-processing, so it is as private as the outputs): ``draw(value, size, source)``
    gives *size* of its values at input *value*, ``show`` shows one, ``pairs`` are the
    neighbouring inputs it is compared at (``None``: the probe's :attr:`~Probe.pairs`),
    ``sessions`` is how many the audit draws per input at most (``None``: the probe's sample
    size), and ``covers`` the cells (surface, dimension) a passed audit of it covers, sampled."""

    what: str
    draw: Callable[[int, int, RandomSource], npt.NDArray[Any]]
    show: Callable[[int], str]
    pairs: tuple[tuple[int, int], ...] | None = None
    sessions: int | None = None
    covers: tuple[tuple[str, Dimension], ...] = ()


@dataclass(frozen=True)
class DataSpace:
    """What the property search feeds a mechanism: arbitrary data, which of it is valid, and the
    call that takes it."""

    data: st.SearchStrategy[Any]
    valid: Callable[[object], bool]
    call: Callable[[object, SeededSource], object]


@dataclass(frozen=True)
class Probe(ABC):
    """One mechanism instance as the contracts see it (see the module docstring)."""

    mechanism: Mechanism
    params: dict[str, Any]
    #: Whether this kind's exact checks are cheap enough to keep every generated case
    #: (:mod:`..generated`) and to check the exact accuracy claims on them too.
    exhaustive: ClassVar[bool] = False
    #: The surfaces (:attr:`dpplug.kind.Kind.surfaces`) whose real outputs :meth:`draw` returns,
    #: and the one whose declared law :meth:`exact_privacy` decides the guarantee from.
    call_surfaces: ClassVar[tuple[str, ...]]
    law_surface: ClassVar[str]

    @property
    def where(self) -> str:
        return describe_case(self.params)

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee neighbouring inputs' output laws must respect."""
        return self.mechanism.guarantee

    # The statistical view: integer inputs and outputs (sampling-law and audit contracts).

    @property
    @abstractmethod
    def inputs(self) -> tuple[int, ...]:
        """Inputs sampled by the statistical contracts: both ends and an informative middle."""

    @property
    def law_inputs(self) -> tuple[int, ...]:
        """The inputs whose real draws the sampling-law contract tests against the exact law:
        all of :attr:`inputs` unless a probe says why fewer suffice."""
        return self.inputs

    @property
    @abstractmethod
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Neighbouring inputs for the audit."""

    @abstractmethod
    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """*size* outputs for input *value* (integers, unless the mechanism is broken)."""

    @abstractmethod
    def law(self, value: int) -> Pmf:
        """The exact law of :meth:`law_draw`'s outputs (``NotSupported`` if there is none)."""

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """The outputs the sampling law tests against :meth:`law`: :meth:`draw`'s unless a
        probe classifies real outputs more finely (by the noise they recorded)."""
        return self.draw(value, size, source)

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """An exact law the sampling-law contract tests real draws against, and a rational bound
        on its total-variation distance to the true law of :meth:`law_draw`'s outputs: the exact law
        and 0 by default; a law inside an enclosure and the enclosure's width for a mechanism
        whose probabilities are irrational (docs/conformance.md#enclosed-laws)."""
        return self.law(value), 0

    def sample_size(self, settings: Settings) -> int:
        """How many outputs the statistical contracts draw per input."""
        return settings.samples

    def audit_statistics(self, settings: Settings) -> tuple[AuditStatistic, ...]:
        """What the audit compares at :attr:`pairs`: the outputs of :meth:`draw` by default."""
        return (AuditStatistic("", self.draw, self.show_output),)

    def show_input(self, value: int) -> str:
        return str(value)

    def show_output(self, value: int) -> str:
        return str(value)

    # The kind-specific questions of the other contracts.

    def small(self, settings: Settings) -> bool:
        """Whether this case is small enough for the exact checks (generated cases that are
        not are dropped)."""
        return True

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """The declared law against what the code does (:mod:`..replay`): failures in words
        and a summary of what was compared. Nothing by default."""
        return PrivacyCheck((), "")

    @abstractmethod
    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """The declared guarantee checked exactly on every neighbouring pair of small inputs
        (``NotSupported`` where the laws cannot be computed)."""

    @abstractmethod
    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """The declared accuracy bounds at :data:`BETAS`, exact where the law allows (where exact
        claims are cheap, as a sampler's and a selector's, at :data:`EXACT_BETAS`)."""

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        """What the report plots for accuracy (empty: nothing)."""
        return {}

    @abstractmethod
    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        """Calls with invalid data, each of which must raise a dpplug error before any draw."""

    @abstractmethod
    def data_space(self) -> DataSpace:
        """Arbitrary data for the property search, with its validity and the call taking it."""

    @abstractmethod
    def calls(self, seed: int) -> list[Call]:
        """A few calls on caller data of every shape the kind takes (arrays, mappings, rows)."""

    def large_calls(self, seed: int) -> list[Call]:
        """Calls on caller data as large as the kind takes (:data:`LARGE` counts, or as many
        labels and rows as the mechanism allows), made once per declared case: code paths taken
        only for large batches must leave the caller's data alone too. None by default."""
        return []

    @abstractmethod
    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        """What is wrong with real outputs: type, shape, range, canonical order, randomness only
        from the source, and a data-independent draw count if *strict*."""

    # The surface × dimension matrix (dpplug.surfaces): what the kind checks along each cell
    # beyond the contracts' own questions above.

    def law_tests(self, settings: Settings) -> list[LawTest]:
        """Tests of real outputs against exact laws for the sampling-law contract (none by
        default)."""
        return []

    def checks(self, settings: Settings) -> list[Check]:
        """Exact and deterministic checks, each run by the contract it names (none by
        default)."""
        return []

    def ladder(self) -> Iterator[tuple[str, Probe]]:
        """This case with one integer parameter moved up its size ladder
        (:meth:`~dpplug.param_types.IntegerType.ladder`: one past 8, 64, 1024, 2^16, 2^31, 2^32
        and 2^53 where the range allows, and the range's top), as ``name=value`` and the probe
        of the mechanism made from it, for each the plugin accepts: where a limit keyed to a
        size (a table of 8 weights, a split capped at 64 partitions) breaks a declaration that
        the small cases keep; with a universe of 2^64 labels where the declared one is too
        small for the value."""
        for where, changes in ladder_changes(type(self.mechanism).schema):
            made = next(filter(None, map(self.variant, changes)), None)
            if made is not None:
                yield where, made

    def others_first(self, call: Callable[[Probe], object]) -> None:
        """*call* on the first case of :meth:`ladder` (an instance with other parameters), so
        that a check made next on this instance sees state shared between instances (a table
        cached per β for every instance)."""
        first = next(self.ladder(), None)
        if first is not None:
            call(first[1])

    def variant(self, changes: dict[str, Any]) -> Probe | None:
        """The probe of this case with *changes* to its parameters, or None if the plugin
        refuses them."""
        params = {**self.params, **changes}
        try:
            made = self.mechanism.registry_in_use().create(self.mechanism.name, **params)
        except DpplugError:
            return None
        return type(self)(made, params)


def hostile_rows_and_mappings(known: list[Any], n: int, max_rows: int) -> st.SearchStrategy[Any]:
    """Rows and label → count mappings whose labels are sometimes *known* ones and otherwise of
    any type, counts of any type near [0, n], and data that is neither (the property search of
    kinds that take label data)."""
    label = st.one_of(
        st.sampled_from(known),
        st.integers(-3, 2**70),
        st.text(max_size=3),
        st.binary(max_size=3),
        st.floats(),
        st.booleans(),
        st.none(),
    )
    count = st.one_of(st.integers(-2, n + 2), st.floats(), st.booleans(), st.fractions())
    return st.one_of(
        st.lists(label, max_size=max_rows),
        st.dictionaries(label, count, max_size=3),
        st.text(max_size=3),
        st.integers(),
        st.none(),
    )


def bad_count_arrays(low: int, high: int) -> list[object]:
    """Count arrays every count-taking call must refuse, for counts in [low, high]."""
    return [
        [low - 1],
        [high + 1],
        [0.5],
        np.array([1.0]),
        [True],
        np.array(["1"]),
        np.array([1, 2], dtype=object),
        [2**70],
        "12",
    ]


def count_space(call: Callable[[object, SeededSource], object], low: int, high: int) -> DataSpace:
    """Short lists of integers (any size) and floats, for calls taking counts in [low, high]."""

    def valid(counts: object) -> bool:
        return isinstance(counts, list) and all(
            isinstance(c, int) and low <= c <= high for c in counts
        )

    return DataSpace(
        st.lists(st.one_of(st.integers(-(2**65), 2**65), st.floats()), max_size=4), valid, call
    )


def strict_time_problems(strict: bool, draws: dict[str, int]) -> list[str]:
    """A claim of strict running time is false if the draws differ between the data sets."""
    if strict and len(set(draws.values())) > 1:
        return [f"claims strict running time but the number of draws depends on the data: {draws}"]
    return []


def array_hygiene(
    run: Callable[[npt.NDArray[np.int64], SeededSource], Any],
    check: Callable[[npt.NDArray[np.int64], Any], list[str]],
    equal: Callable[[Any, Any], bool],
    inputs: dict[str, npt.NDArray[np.int64]],
    strict: bool,
    seed: int,
) -> list[str]:
    """Hygiene of a call on count arrays: *check* each output, something drawn (on some input: an
    input whose outcome is certain, no partition able to pass, needs no draw), the same output
    from the same seed (*equal*), and a data-independent draw count if *strict*."""
    problems: list[str] = []
    draws: dict[str, int] = {}
    for label, counts in inputs.items():
        source = SeededSource(seed)
        out = run(counts, source)
        draws[label] = source.draws
        problems += check(counts, out)
        if not equal(out, run(counts, SeededSource(seed))):
            problems.append(NOT_REPRODUCIBLE)
    if not any(draws.values()):
        problems.append(f"drew nothing from the RandomSource on any of {sorted(draws)}")
    return problems + strict_time_problems(strict, draws)


def count_inputs(low: int, high: int, seed: int) -> dict[str, npt.NDArray[np.int64]]:
    """8 × 8 count arrays at the low end, the high end and mixed."""
    shape = (8, 8)
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    return {
        "low": np.full(shape, low, dtype=np.int64),
        "high": np.full(shape, high, dtype=np.int64),
        "mixed": rng.integers(low, high, size=shape, endpoint=True, dtype=np.int64),
    }


#: Elements of the large inputs of :meth:`Probe.large_calls`.
LARGE = 1 << 16


def large_counts(low: int, high: int, seed: int) -> npt.NDArray[np.int64]:
    """A 256 × 256 array of counts drawn uniformly from [low, high]."""
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    return rng.integers(low, high, size=(256, 256), endpoint=True, dtype=np.int64)


def universe_labels(universe: Universe, count: int = LARGE) -> list[Any]:
    """The first *count* labels of *universe* (all of them if it is smaller)."""
    return [universe.label(i) for i in range(min(count, universe.size))]


def large_label_calls(
    what: str, call: Callable[[object, RandomSource], object], labels: list[Any], n: int, seed: int
) -> list[Call]:
    """*call* on a mapping that gives every one of *labels* a count (the counts, mostly 0 when
    there are more labels than rows, add up to min(n, :data:`LARGE`)) and on as many rows over
    them, in a seeded random order."""
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    rows = min(n, LARGE)
    counts = rng.multinomial(rows, [1 / len(labels)] * len(labels))
    mapping = {label: int(c) for label, c in zip(labels, counts, strict=True)}
    listed = [labels[i] for i in rng.integers(0, len(labels), size=rows)]
    return [
        Call(f"{what}(a mapping of {len(labels)} labels)", partial(call, mapping), (mapping,)),
        Call(f"{what}({rows} rows)", partial(call, listed), (listed,)),
    ]


def quantile_plot(case: str, errors: npt.NDArray[Any], claims: dict[Any, int]) -> dict[str, Any]:
    """Declared a against the empirical (1 − β)-quantile of *errors*, for the report."""
    return {
        "case": case,
        "betas": [str(beta) for beta in claims],
        "declared_a": list(claims.values()),
        "empirical_quantile": [float(np.quantile(errors, 1 - float(beta))) for beta in claims],
    }
