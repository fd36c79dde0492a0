"""Contract 1, declaration: name, kind, guarantee with its neighbouring relation, accuracy (a
bound a ≥ 0 for each β of the exact grid, :data:`~.probes.base.EXACT_BETAS`), parameter schema
and conformance cases are present and consistent, and each case declares what its kind requires
(:meth:`dpplug.kind.Kind.declaration_problems`: a sampler's n and d, a releaser's universe and
bound n on rows, …).

It also checks the budget dimension (:mod:`.budget`): on every declared case and on one case of
each group the suite derives from the schema (:func:`~.generated.candidate_groups`: every rung
of the ε ladder from 1/1000 to 64 and a seeded ε inside each wide gap, every δ, …, and each
integer parameter up its size ladder, :func:`~.generated.ladder_groups`), whatever its size, the
declared guarantee is within the ε and δ asked for."""

from __future__ import annotations

from fractions import Fraction

from dpplug.conformance.budget import budget_problem
from dpplug.conformance.coverage import Cell, Status, cell
from dpplug.conformance.generated import candidate_groups, ladder_groups
from dpplug.conformance.probes.base import EXACT_BETAS, describe_case, instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import BadParameter, DpplugError
from dpplug.guarantee import Accuracy, Guarantee, Neighbouring
from dpplug.mechanism import Mechanism
from dpplug.plugin_registry import Entry
from dpplug.surfaces import Dimension

NAME = "declaration"
_BETA = Fraction(1, 20)


def _accuracy_problems(mechanism: Mechanism) -> list[str]:
    """accuracy(β) must state a bound a ≥ 0 for that β at every β of the exact grid
    (:data:`~.probes.base.EXACT_BETAS`), refusing (BadParameter) only βs other than 1/20."""
    for beta in EXACT_BETAS:
        try:
            bound = mechanism.accuracy(beta).per_query
        except BadParameter:
            if beta == _BETA:
                raise
            continue
        if not isinstance(bound.a, int) or bound.a < 0 or bound.beta != beta:
            return [f"accuracy({beta}) gives a={bound.a!r}, β={bound.beta}"]
    return []


def _budget(entry: Entry, settings: Settings) -> tuple[list[str], int]:
    """Budget problems on the declared cases and one accepted case per generated group, and how
    many cases were compared."""
    cases = [dict(case) for case in entry.cls.conformance_cases]
    for group in [*candidate_groups(entry, settings.seed), *ladder_groups(entry)]:
        for params in group:
            try:
                entry.create(**params)
            except DpplugError:
                continue
            cases.append(params)
            break
    problems = []
    for params in cases:
        problem = budget_problem(entry.create(**params))
        if problem is not None:
            problems.append(f"{describe_case(params)}: {problem}")
            break
    return problems, len(cases)


def check(entry: Entry, settings: Settings) -> ContractResult:
    cls = entry.cls
    problems: list[str] = []
    if not cls.conformance_cases:
        problems.append("no conformance_cases: declare a few small parameterisations")
    shown = ""
    for params, mechanism in instances(entry):
        where = describe_case(params)
        guarantee = mechanism.guarantee
        if not isinstance(guarantee, Guarantee) or not isinstance(
            guarantee.neighbouring, Neighbouring
        ):
            problems.append(f"{where}: guarantee is not a dpplug Guarantee with a relation")
            continue
        accuracy = mechanism.accuracy(_BETA)
        if not isinstance(accuracy, Accuracy):
            problems.append(f"{where}: accuracy(β) is not a dpplug Accuracy")
            continue
        bound = accuracy.per_query
        problems += [f"{where}: {problem}" for problem in _accuracy_problems(mechanism)]
        kind_problems = entry.kind.declaration_problems(mechanism)
        problems += [f"{where}: {problem}" for problem in kind_problems]
        shown = shown or f"{guarantee.describe()}; a = {bound.a} at β = 1/20 ({where})"
    if problems:
        return ContractResult(NAME, Outcome.FAILED, "; ".join(problems))
    over, compared = _budget(entry, settings)
    if over:
        return ContractResult(NAME, Outcome.FAILED, over[0])
    cells: tuple[Cell, ...] = (
        cell(
            "guarantee",
            Dimension.BUDGET,
            Status.CHECKED,
            f"within the ε and δ asked for on {compared} cases (the ε ladder 1/1000–64)",
        ),
        cell(
            "guarantee",
            Dimension.SIZE,
            Status.CHECKED,
            "within the ε and δ asked for with each integer parameter up its size ladder (one "
            "past 8, 64, 1024, 2^16, 2^31, 2^32, 2^53, and the schema's top)",
        ),
    )
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{len(cls.conformance_cases)} case(s): {shown}; the guarantee within the budget asked "
        f"for on {compared} cases",
        power="any",
        cells=cells,
    )
