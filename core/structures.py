"""What makes a release's exact law computable: the structure a mechanism declares
(:meth:`dpplug.Mechanism.exact_structure`).

A sampler's law is its pmf and a partition selector's its keep probabilities: every mechanism of
those kinds declares them. A release that draws more (a histogram, an anonymized histogram, a
session of answers) has a law the conformance suite can compute only through one of a closed set
of structures, each a frozen dataclass named for what it is:

==========================  ===================================================  ================
structure                   what the mechanism says                              module
==========================  ===================================================  ================
:class:`ServedDraws`        every draw is served by its RandomSource, so the     here
                            law of any call is enumerated from the code
``CompactField``            Balcer–Vadhan's compact histogram: noisy counts,     the histogram
                            then field values on the empty-bin law's classes     releaser kind
``IndependentAnswers``      a session's answers are independent given the        the query
                            queries, each with a law of its true answer          releaser kind
``SparseVectorRounds``      answers in rounds of a two-sided sparse-vector       the query
                            test, each ended by one noisy answer                 releaser kind
``NoisyCoordinates``        T integer coordinates, each moved by at most one     the query
                            by a row, with independent noise                     releaser kind
==========================  ===================================================  ================

A mechanism returns one from ``exact_structure()``, or ``None``: its release is then checked on
samples only (the level it can reach is "audited"). The conformance suite has one verifier per
structure, keyed by its type (``docs/conformance.md``), so a mechanism of any kind that reuses a
structure needs no change to the suite: :class:`ServedDraws` serves histogram releasers and
anonymized-histogram releasers alike.
"""

from __future__ import annotations

from dataclasses import dataclass


class ExactStructure:
    """The base of the structures of the module docstring."""

    __slots__ = ()


@dataclass(frozen=True)
class ServedDraws(ExactStructure):
    """Every draw of the mechanism's calls is served by the RandomSource it is given
    (:meth:`~dpplug.randomness.RandomSource.serve`): programs of draws run by
    :func:`dpplug.program.run`, a sampler's noise asked by :func:`dpplug.program.noise`, and raw
    ``bits``/``uniform`` draws of at most :data:`dpplug.program.MAX_RAW_OUTCOMES` outcomes.

    The exact law of a call is then computed from the code that releases, by serving each draw
    from an enumeration of its law (:func:`dpplug.program.served_law`): finite draws are
    enumerated exactly, a sampler's unbounded noise over a window of its transcripts
    (``docs/conformance.md``)."""
