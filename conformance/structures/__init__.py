"""One verifier per exact structure (:mod:`dpplug.structures`), keyed by the structure's type:
:func:`verifier_for` is how every probe finds the verifier of what its mechanism declares, so a
mechanism of any kind that declares a structure the suite already verifies needs no change here.

- :class:`~dpplug.structures.ServedDraws`: :mod:`.served_draws` (finite laws enumerated from the
  real call; unbounded noise through :mod:`.noise_window`);
- ``CompactField``: :mod:`.compact_field`;
- ``IndependentAnswers``: :mod:`.independent_answers`;
- ``SparseVectorRounds``: :mod:`.sparse_vector_rounds`;
- ``NoisyCoordinates``: :mod:`.noisy_coordinates`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpplug.conformance.structures.compact_field import CompactFieldVerifier
from dpplug.conformance.structures.independent_answers import IndependentAnswersVerifier
from dpplug.conformance.structures.noisy_coordinates import NoisyCoordinatesVerifier
from dpplug.conformance.structures.served_draws import ServedDrawsVerifier
from dpplug.conformance.structures.sparse_vector_rounds import SparseVectorVerifier
from dpplug.conformance.structures.verifier import Verifier

if TYPE_CHECKING:
    from dpplug.conformance.probes.base import Probe

VERIFIERS: dict[type, type[Verifier]] = {
    verifier.structure: verifier
    for verifier in (
        ServedDrawsVerifier,
        CompactFieldVerifier,
        IndependentAnswersVerifier,
        SparseVectorVerifier,
        NoisyCoordinatesVerifier,
    )
}


def verifier_for(probe: Probe) -> Verifier:
    """The verifier of the structure the probe's mechanism declares (the default
    :class:`~.verifier.Verifier` when it declares none, or one the suite does not know)."""
    declared = probe.mechanism.exact_structure()
    return VERIFIERS.get(type(declared), Verifier)(probe, declared)


__all__ = ["VERIFIERS", "Verifier", "verifier_for"]
