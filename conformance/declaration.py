"""Contract 1, declaration: name, kind, guarantee with its neighbouring relation, accuracy (a
bound a ≥ 0 for each β of the exact grid, :data:`~.probes.base.EXACT_BETAS`), parameter schema
and conformance cases are present and consistent, and each case declares what its kind requires
(:meth:`dpplug.kind.Kind.declaration_problems`: a sampler's n and d, a releaser's universe and
bound n on rows, …)."""

from __future__ import annotations

from fractions import Fraction

from dpplug.conformance.probes.base import EXACT_BETAS, describe_case, instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, Guarantee, Neighbouring
from dpplug.mechanism import Mechanism
from dpplug.plugin_registry import Entry

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


def check(entry: Entry, _settings: object) -> ContractResult:
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
    return ContractResult(
        NAME, Outcome.PASSED, f"{len(cls.conformance_cases)} case(s): {shown}", power="any"
    )
