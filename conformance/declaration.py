"""Contract 1, declaration: name, kind, guarantee with its neighbouring relation, accuracy,
parameter schema and conformance cases are present and consistent (DESIGN.md "Conformance");
a histogram releaser also declares its universe and its bound n on rows."""

from __future__ import annotations

from fractions import Fraction

from dpplug.conformance.cases import describe_case, instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.guarantee import Accuracy, Guarantee, Neighbouring
from dpplug.kinds import CountingQuerySampler, HistogramReleaser
from dpplug.registry import Entry
from dpplug.universe import Universe

NAME = "declaration"
_BETA = Fraction(1, 20)


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
        if not isinstance(bound.a, int) or bound.a < 0 or bound.beta != _BETA:
            problems.append(f"{where}: accuracy(1/20) gives a={bound.a!r}, β={bound.beta}")
        if isinstance(mechanism, CountingQuerySampler):
            for attribute in ("n", "d"):
                value = getattr(mechanism, attribute, "missing")
                if value is not None and (not isinstance(value, int) or value < 1):
                    problems.append(f"{where}: {attribute} must be None or an int ≥ 1")
        if isinstance(mechanism, HistogramReleaser):
            if not isinstance(getattr(mechanism, "universe", None), Universe):
                problems.append(f"{where}: universe must be a dpplug Universe")
            n = getattr(mechanism, "n", None)
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                problems.append(f"{where}: n (the public bound on rows) must be an int ≥ 1")
        shown = shown or f"{guarantee.describe()}; a = {bound.a} at β = 1/20 ({where})"
    if problems:
        return ContractResult(NAME, Outcome.FAILED, "; ".join(problems))
    return ContractResult(NAME, Outcome.PASSED, f"{len(cls.conformance_cases)} case(s): {shown}")
