"""The verifier of an exact structure (:mod:`dpplug.structures`): what the conformance suite
does with a mechanism's declared structure, for one probe of its kind.

A probe (:mod:`dpplug.conformance.probes`) knows its kind's inputs, neighbours and outputs; a
verifier knows how the structure makes their laws computable. The probe hands the exact and
sampling-law questions to the verifier of the structure its mechanism declares
(:func:`dpplug.conformance.structures.verifier_for`); a mechanism without one gets the default
verifier, which has no exact law (the contracts that need one report a skip, so the plugin can
reach "audited" at most).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy.typing as npt

from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.conformance.probes.base import Probe

NO_EXACT_LAW = (
    "it declares no exact structure (dpplug.structures) its release law can be computed from, "
    "so its exact privacy and its sampling law are not checked; the audit and the accuracy "
    "contract check it on samples"
)


class Verifier:
    """The default verifier: nothing declared (see the module docstring). Subclasses verify one
    structure type (:attr:`structure`) and override what it makes computable."""

    #: The structure type this verifier verifies (``None``: no structure).
    structure: ClassVar[type | None] = None
    #: Whether its sampling-law tests draw whole workloads through ``answers`` (a query
    #: session's batch path), so that path may draw in its own order and still be held to the
    #: law; otherwise a batch must give, from one seed, the answers of one query per call.
    tests_batch_law: ClassVar[bool] = False

    def __init__(self, probe: Probe, declared: Any) -> None:
        self.probe, self.declared = probe, declared

    def law_inputs(self) -> tuple[int, ...]:
        """The inputs whose real outputs the sampling law tests (the probe's by default)."""
        return self.probe.inputs

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """The law real outputs at *value* are tested against, and its distance to the truth."""
        raise NotSupported(NO_EXACT_LAW)

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """The real outputs the sampling law tests at *value* (the probe's draws by default)."""
        return self.probe.draw(value, size, source)

    def small(self, settings: Settings) -> bool:
        """Whether the case is small enough for the structure's exact checks."""
        return True

    def show_input(self, value: int) -> str | None:
        """How to show a sampling-law input the structure adds (``None``: the probe's way)."""
        return None

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """The declared guarantee decided exactly from the structure."""
        raise NotSupported(NO_EXACT_LAW)

    def accuracy_bounds(self, a: int, queries: int) -> tuple[str, Rat, Rat] | None:
        """(what, lo, hi): lo ≤ Pr[the largest error of *queries* outputs exceeds *a*] ≤ hi,
        from the declared law, on the structure's own worst case; ``None`` where the structure
        does not know it (the accuracy contract then samples)."""
        return None

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """The code held to the structure (nothing to compare by default)."""

        return PrivacyCheck((), "")
