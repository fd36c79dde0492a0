"""Contract 3, exact privacy: the declared guarantee holds exactly, in rationals, on every pair of
neighbouring small inputs of every conformance case (no statistics, so no false alarms).

Each kind's probe enumerates its neighbouring inputs and their exact output laws (a sampler's
pmfs over every count, a selector's per-partition laws up to saturation, a releaser's release
laws over tiny datasets) and compares them with :mod:`.divergence`: the largest likelihood ratio
against e^ε for a pure guarantee, the hockey-stick divergence at e^ε against δ for an approximate
one. A case whose laws cannot be computed skips the contract with the reason.
"""

from __future__ import annotations

from dpplug.conformance.probes import probes
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.plugin_registry import Entry

NAME = "exact-privacy"


def check(entry: Entry, settings: Settings) -> ContractResult:
    shown: list[str] = []
    for probe in probes(entry):
        try:
            result = probe.exact_privacy(settings)
        except NotSupported as exc:
            raise NotSupported(f"{probe.where}: {exc}") from None
        if result.failures:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {result.failures[0]}")
        shown.append(result.summary)
    return ContractResult(NAME, Outcome.PASSED, "; ".join(shown) + " (every neighbouring pair)")
