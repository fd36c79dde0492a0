"""What an exact check of a plugin found (:class:`PrivacyCheck`), shared by the probes
(:mod:`dpplug.conformance.probes`) and the verifiers of exact structures
(:mod:`dpplug.conformance.structures`)."""

from __future__ import annotations

from dataclasses import dataclass

from dpplug.conformance.coverage import Cell


@dataclass(frozen=True)
class PrivacyCheck:
    """The outcome of a probe's exact privacy check: failures in words (empty: passed), a
    summary of what was compared, and for an implementation check that did not compare every
    value of the code's draws, ``code_tv``: the smallest total-variation distance between the
    code's law and the declared one that it sees with probability at least 1/2 (the unexplored
    mass of a replay cut at a budget, :mod:`..bounded_replay`, which it always sees; or the
    share of a piece of values checked only at random points, :mod:`..replay`). 0: every value
    was compared, so any deviation is seen. ``cells``: the cells of the surface × dimension matrix
    it covered, where it says (otherwise the contract infers them from the summary)."""

    failures: tuple[str, ...]
    summary: str
    code_tv: float = 0.0
    cells: tuple[Cell, ...] = ()
