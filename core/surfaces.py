"""What a mechanism exposes, and along which dimensions the conformance suite must check it.

A kind lists its *surfaces* (:attr:`dpplug.kind.Kind.surfaces`): every public entry point of its
mechanisms and of what their calls return (a sampler's ``sample``, a selector's ``decider``, a
session's ``answer``, …) and every quantity a mechanism declares (its law, guarantee, accuracy,
noise standard deviation). Each surface names the :class:`Dimension` s it is checked along; the
suite derives its checks from this inventory and reports which cells of the surface × dimension
matrix it covered, how (exactly, on samples, or by a deterministic check) and which it could not
reach and why (``docs/conformance.md``). A plugin reaches "exactly verified" only when every cell
its kind requires of it is covered. A kind also names the public attributes of its base class
that are not surfaces, with the reason (:attr:`dpplug.kind.Kind.not_surfaces`), so a test can
fail when a kind exposes something the inventory does not mention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpplug.mechanism import Mechanism


class Dimension(StrEnum):
    """A way a surface can be right on the inputs the suite happens to try and wrong elsewhere."""

    #: The code's output law against the declared law, on small inputs.
    LAW = "law"
    #: The guarantee over the declared neighbouring relation and every relation the adapters
    #: derive from it (one row added or removed for a replace-one releaser, to and from the
    #: empty dataset).
    RELATIONS = "relations"
    #: Large parameters and data, up to the schema's limits (counts near 2^31, 2^53, 2^63, many
    #: labels, large n), so code paths keyed to size are reached.
    SIZE = "size"
    #: The joint law of the elements of one call, and calls as large as pipelines send.
    BATCH = "batch"
    #: Every form of input the kind accepts (numpy arrays of every integer width and memory
    #: order, lists, one-shot iterators, mappings, labels of mixed types).
    FORMS = "forms"
    #: A reused instance, interleaved calls and sessions, outputs re-read after later calls.
    STATE = "state"
    #: Every field of what a call returns, not only the part a probe reads.
    WHOLE = "whole"
    #: The declared guarantee against the budget the caller asked for.
    BUDGET = "budget"
    #: Declared numbers (accuracy, noise standard deviation) against the truth.
    NUMBERS = "numbers"


def _always(mechanism: Mechanism) -> bool:
    return True


@dataclass(frozen=True)
class Surface:
    """One public entry point or declared quantity of a kind's mechanisms (see the module
    docstring): its name as a caller writes it, what it is, the dimensions it is checked along,
    and, for a surface only some mechanisms of the kind have (a bounded sampler's M(c, u)),
    which ones (``applies``)."""

    name: str
    summary: str
    dimensions: tuple[Dimension, ...]
    applies: Callable[[Mechanism], bool] = _always


#: The surfaces every mechanism has, whatever its kind.
GUARANTEE = Surface(
    "guarantee",
    "the privacy guarantee it achieves, with its neighbouring relation",
    (Dimension.BUDGET, Dimension.RELATIONS, Dimension.SIZE),
)
ACCURACY = Surface(
    "accuracy",
    "the (a, β) accuracy it declares, per query and simultaneous",
    (Dimension.NUMBERS,),
)
#: Public attributes every mechanism has that are not surfaces, and why.
MECHANISM_NOT_SURFACES = {
    "registry_in_use": "the registry other mechanisms are looked up in: no release",
    "exact_structure": "how the suite computes laws (dpplug.structures); checked through them",
    "kind": "the kind itself",
    "schema": "the parameter schema, validated before the mechanism exists (bad-input)",
    "conformance_cases": "the cases the suite starts from",
    "strict_time": "checked by the hygiene contract's draw counts",
    "name": "the name",
    "summary": "text",
    "reference": "text",
}
