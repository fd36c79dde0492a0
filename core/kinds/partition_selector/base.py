"""The partition-selector kind (Desfontaines, Voss, Gipson, Mandayam, "Differentially private
partition selection", PoPETs 2022): keep each partition with n privacy units with probability
π(n), independently of the other partitions, and never a partition absent from the data.

Plugins subclass :class:`PartitionSelector`, implement its ``_``-methods and register the class
through :func:`register_partition_selectors`. Guarantees are stated for one privacy unit added or
removed (or replaced, for bounded DP) who contributes to at most ℓ₀ partitions. In OpenDP a
selector is a measurement on label counts (after ``then_count_by``) or on label vectors; in
PipelineDP it is a ``partition_selection_strategy``. ``docs/kinds.md`` is the reference.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from dpplug.data import integer_array, integer_scalar
from dpplug.errors import BadData, PluginFault
from dpplug.exact import smallest_at_least
from dpplug.guarantee import Guarantee, LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import DataForm, Kind, LabelDistance, PipelineRole, ReleaseForm
from dpplug.kinds.partition_selector.gaussian_dp import GaussianPairs
from dpplug.kinds.sampler.base import UNBOUNDED_COUNT
from dpplug.mechanism import Mechanism
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface


@dataclass(frozen=True)
class Selection:
    """The result of a partition selector: which partitions are kept, and noisy counts if any.

    ``noisy_counts`` is ``None`` for selectors that only decide; thresholding selectors release
    the noisy count of each kept partition (entries of dropped partitions are 0).
    """

    keep: npt.NDArray[np.bool_]
    noisy_counts: npt.NDArray[np.int64] | None = None


class PartitionSelector(Mechanism):
    """A partition selector: keeps a partition with n privacy units with probability π(n).

    π(0) = 0: partitions absent from the data are never released. :attr:`per_partition` is the
    guarantee of a single partition's release when its unit count changes by one; the
    guarantee composes it over the partitions one unit can touch. Exact checks compare
    :meth:`output_pmf` of neighbouring unit counts up to :attr:`saturation`, from which on
    neighbouring laws repeat.

    Required of a plugin:

    - ``saturation`` (instance attribute) and the :class:`Mechanism` declarations;
    - :attr:`per_partition`, :meth:`_keep_probability` (units) → exact π(units), and
      :meth:`_select` (unit counts, source, public mask) → :class:`Selection`;
    - :meth:`_output_pmf` and ``releases_counts = True`` when the selector releases noisy counts
      (the default is the keep/drop Bernoulli law).

    The public methods validate their input first, so bad input is refused before any draw.
    """

    #: Unit count from which the pair (output law at n, at n + 1) no longer changes.
    saturation: int
    #: For keep-only selectors whose guarantee is proven for all changed partitions together
    #: (Gaussian thresholding, Gopi et al.): their keep probabilities' Gaussian DP
    #: (:class:`~dpplug.kinds.partition_selector.gaussian_dp.GaussianPairs`), composed in ℓ₂; None
    #: when the guarantee is the composition of :attr:`per_partition`.
    gaussian: GaussianPairs | None = None
    #: True for thresholding selectors, whose :class:`Selection` carries noisy counts: what
    #: frameworks release is then {label: noisy count}, not the kept labels.
    releases_counts: ClassVar[bool] = False

    @property
    @abstractmethod
    def per_partition(self) -> Guarantee:
        """(ε, δ) of one partition's release under a change of its unit count by one."""

    def keep_probability(self, units: object) -> Any:
        """π(units), the exact rational probability of keeping a partition with *units* units."""
        return self._keep_probability(integer_scalar(units, 0, UNBOUNDED_COUNT, "units"))

    def kept_from(self, beta: Any) -> int:
        """The smallest unit count kept with probability at least 1 − β (exact; a binary search,
        since π is non-decreasing and π(saturation) = 1)."""
        return smallest_at_least(
            lambda n: bool(self.keep_probability(n) >= 1 - beta), 0, self.saturation, True
        )

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        """One partition's keep decision from its unit count, with the law of :meth:`select`,
        for callers that see partitions one at a time (PipelineDP's per-partition filter)."""
        rng = default_source(source)

        def decide(units: int) -> bool:
            count = integer_scalar(units, 0, UNBOUNDED_COUNT, "a partition's unit count")
            return bool(self.select(np.array([count], dtype=np.int64), rng).keep[0])

        return decide

    def output_pmf(self, units: object) -> Pmf:
        """The exact law of what one partition releases: 0 when dropped, 1 when kept (selectors
        that only decide), or the released noisy count (thresholding selectors, always ≥ 1)."""
        return self._output_pmf(integer_scalar(units, 0, UNBOUNDED_COUNT, "units"))

    def select(
        self,
        unit_counts: object,
        source: RandomSource | None = None,
        public: object = None,
    ) -> Selection:
        """Keep decisions for an array of per-partition unit counts (same shape).

        *public* (a boolean array of the same shape, for selectors that support public
        partitions) marks partitions known in advance; they may have 0 units.
        """
        array = integer_array(unit_counts, 0, UNBOUNDED_COUNT, what="unit counts")
        mask = None
        if public is not None:
            try:
                mask = np.asarray(public)
            except ValueError as exc:  # ragged nesting
                raise BadData(f"public must be a rectangular boolean array ({exc})") from None
            if mask.dtype != np.bool_ or mask.shape != array.shape:
                raise BadData(
                    f"public must be a boolean array of shape {array.shape}, got "
                    f"{mask.dtype} of shape {mask.shape}"
                )
        return self._select(array, default_source(source), mask)

    def _output_pmf(self, units: int) -> Pmf:
        keep = self._keep_probability(units)
        return Pmf({0: 1 - keep, 1: keep})

    @abstractmethod
    def _keep_probability(self, units: int) -> Any:
        """π(units) for a validated unit count, an exact rational."""

    @abstractmethod
    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        """Keep decisions (and noisy counts) for validated unit counts."""


@hookspec
def register_partition_selectors(register: Register) -> None:
    """Register partition selectors: ``register(cls)`` for each subclass of
    :class:`dpplug.PartitionSelector`."""


class PartitionSelectorKind(Kind):
    """The partition-selector kind (see the module docstring)."""

    name = "partition-selector"
    hookspec = staticmethod(register_partition_selectors)
    base = PartitionSelector
    relations = (Relation.ADD_REMOVE, Relation.REPLACE_ONE)
    data_form = DataForm.LABELS
    pipeline_role = PipelineRole.PARTITION_SELECTION
    summary = "keeps each partition of the data with a probability set by its privacy units"
    surfaces = (
        Surface(
            "select",
            "keep decisions (and noisy counts) for an array of unit counts, public partitions too",
            (
                Dimension.LAW,
                Dimension.BATCH,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        Surface(
            "decider",
            "one partition's decision per call (PipelineDP's per-partition route)",
            (Dimension.LAW, Dimension.BATCH, Dimension.SIZE, Dimension.FORMS, Dimension.STATE),
        ),
        Surface(
            "keep_probability",
            "the exact keep probability π(n) and a partition's output law",
            (Dimension.RELATIONS, Dimension.SIZE),
        ),
        Surface(
            "kept_from",
            "the smallest unit count kept with probability at least 1 − β",
            (Dimension.NUMBERS,),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "output_pmf": "part of the keep_probability surface",
        "per_partition": "part of the guarantee surface (composed over ℓ₀)",
        "saturation": "declared (declaration)",
        "gaussian": "part of the guarantee surface (ℓ₂ composition)",
        "releases_counts": "part of the select surface (its whole release)",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        saturation = getattr(mechanism, "saturation", None)
        if not isinstance(saturation, int) or isinstance(saturation, bool) or saturation < 0:
            problems.append(f"saturation must be an int ≥ 0, got {saturation!r}")
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """At (l₀, l₁, l∞), at most min(l₀, l₁) partitions change, each by at most l∞ units: with
        the per-partition (ε_c, δ_c) and group privacy δ_g = δ_c·Σ_{i<l∞} e^{iε_c}, the release is
        (min(l₁, l₀·l∞)·ε_c, 1 − (1 − δ_g)^{min(l₀, l₁)}). This is the add/remove translation of
        the selector's own relation: a replaced unit is two steps (one removed, one added).

        Selectors with :attr:`PartitionSelector.gaussian` compose in ℓ₂ instead, at their declared
        ε: the units moved have Σ(moved)² ≤ min(l₀·l∞², l∞·l₁), and a partition kept with
        probability 0 before is kept with probability at most π(z + l∞ − 1) after, z the first unit
        count with π(z) > 0
        (:meth:`~dpplug.kinds.partition_selector.gaussian_dp.GaussianPairs.delta`)."""
        if not isinstance(distance, LabelDistance):
            raise TypeError(f"a selector's distance is a LabelDistance, got {distance!r}")
        selector = _selector(mechanism)
        per = selector.per_partition
        changed = min(distance.l0, distance.l1)
        if not changed:
            return per.group(0)
        if selector.gaussian is not None:
            exp_epsilon = selector.guarantee.exp_epsilon
            squares = min(distance.l0 * distance.linf**2, distance.linf * distance.l1)
            steps = min(distance.l1, distance.l0 * distance.linf)
            appear = selector.keep_probability(first_kept(selector) + distance.linf - 1)
            delta = selector.gaussian.delta(exp_epsilon, changed, squares, steps, appear)
            return LossBound.of(exp_epsilon, delta)
        one = LossBound(per.group(1).epsilon, per.group(distance.linf).delta)
        return one.compose(changed, min(distance.l1, distance.l0 * distance.linf))

    def release_form(self, mechanism: Mechanism) -> ReleaseForm:
        """The kept labels, or {label: noisy count} when the selector releases counts."""
        releases_counts = _selector(mechanism).releases_counts
        return ReleaseForm.LABEL_COUNTS if releases_counts else ReleaseForm.LABELS

    def apply(
        self, mechanism: Mechanism, data: Any, source: RandomSource | None = None
    ) -> list[Any] | dict[Any, int]:
        """The kept labels in sorted order, or {label: noisy count} for thresholding selectors
        (:attr:`PartitionSelector.releases_counts`; a selection that contradicts it is a
        :class:`PluginFault`, since frameworks declared the release's type from it)."""
        selector = _selector(mechanism)
        counts: Mapping[Any, int] = data
        labels = sorted(counts)
        selection = selector.select(np.array([counts[k] for k in labels], dtype=np.int64), source)
        if (selection.noisy_counts is not None) != selector.releases_counts:
            has = "has" if selection.noisy_counts is not None else "has no"
            raise PluginFault(
                f"{selector.name} declares releases_counts = {selector.releases_counts} but its "
                f"selection {has} noisy counts"
            )
        kept = [label for label, keep in zip(labels, selection.keep, strict=True) if keep]
        if selection.noisy_counts is None:
            return kept
        noisy = dict(zip(labels, selection.noisy_counts.tolist(), strict=True))
        return {label: noisy[label] for label in kept}


def first_kept(selector: PartitionSelector) -> int:
    """The smallest unit count with a positive keep probability (π is non-decreasing)."""
    return smallest_at_least(
        lambda n: bool(selector.keep_probability(n) > 0), 0, selector.saturation, True
    )


def _selector(mechanism: Mechanism) -> PartitionSelector:
    assert isinstance(mechanism, PartitionSelector), mechanism
    return mechanism


PARTITION_SELECTOR = PartitionSelectorKind()
PartitionSelector.kind = PARTITION_SELECTOR
