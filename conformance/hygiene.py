"""Contract 7, hygiene: real outputs are of the declared type, shape and range (and, for releases,
in canonical order, with no empty bin from a releaser that declares it shows none); randomness
comes only from the RandomSource (the same seed gives the same output, and something is drawn);
and a plugin that claims strict running time draws a number of times that does not depend on the
data. Each kind's probe runs its mechanism on a few small inputs and reports what is wrong.
"""

from __future__ import annotations

from dpplug.conformance.probes import probes
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import Entry

NAME = "hygiene"


def check(entry: Entry, settings: Settings) -> ContractResult:
    strict = entry.cls.strict_time
    for probe in probes(entry):
        problems = probe.hygiene_problems(strict, settings.seed)
        if problems:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
    time = "data-independent draw count, " if strict else ""
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"outputs of the declared type, shape and range, {time}reproducible from the RandomSource",
    )
