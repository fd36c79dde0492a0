"""The verifier of :class:`~dpplug.structures.ServedDraws`: every draw of a call is served by its
source, so the suite computes the exact law of the real call (the entry point, on the data)
by serving each draw from an enumeration of its law (:func:`dpplug.program.served_law`).

The probes of the kinds that use it ask for laws through it: a histogram releaser's release law
(finite: every outcome enumerated, :meth:`dpplug.HistogramReleaser.release_law`), an anonymized
histogram releaser's noise transcripts (a sampler's unbounded noise, compared by coupled
likelihood ratios over a window, :mod:`.noise_window`). There is no declaration apart from the
code for the code to depart from, so nothing else is compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.noise_window import Replays
from dpplug.conformance.structures.verifier import Verifier
from dpplug.program import served_steps
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws


class ServedDrawsVerifier(Verifier):
    """Laws of real calls whose draws are served (see the module docstring)."""

    structure = ServedDraws

    def replays(self, call: Callable[[RandomSource], Any], laws: dict[Any, Any]) -> Replays:
        """*call*'s noise requests, replayed by prefix of their outcomes (*laws*: the sampler
        laws computed so far, shared between the calls of one mechanism)."""
        return Replays(served_steps(call), laws)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        return PrivacyCheck((), "the real release enumerated through its served draws")
