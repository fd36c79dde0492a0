"""The anonymized-histogram-releaser kind (Suresh, "Differentially private anonymized
histograms", NeurIPS 2019): a private release of the multiset of a dataset's positive counts,
without labels, as an :class:`~dpplug.AnonymizedHistogram`.

The data is rows (an iterable of hashable labels), a mapping label → count, or the compact form,
prevalences {r: φ_r} (:meth:`AnonymizedHistogramReleaser.release_prevalences`; O(√n) pairs for
n items). No universe and no public n are needed. Guarantees are stated for the paper's
neighbouring relation, sorted-ℓ₁ distance 1 (:attr:`~dpplug.guarantee.Relation.SORTED_L1`): one
count changes by one, a count of 1 may appear or vanish, i.e. one row added or removed.

Plugins subclass :class:`AnonymizedHistogramReleaser`, implement
:meth:`~AnonymizedHistogramReleaser._release` and register the class through
:func:`register_anonymized_histogram_releasers`. In OpenDP a releaser is a measurement on label
counts (after ``then_count_by``) or on label vectors; in PipelineDP the engine counts rows per
label and then counts the counts (prevalences) in the map-reduce, and the release runs once,
centrally, on the (r, φ_r) pairs only. ``docs/kinds.md`` is the reference.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar

from dpplug.data import integer_scalar
from dpplug.errors import BadData
from dpplug.guarantee import Accuracy, LossBound, Relation
from dpplug.hookspecs import Register, hookspec
from dpplug.kind import CentralPlan, DataForm, Kind, LabelDistance, PipelineRole
from dpplug.kinds.anonymized_histogram_releaser.outputs import MAX_ITEMS, AnonymizedHistogram
from dpplug.mechanism import Mechanism
from dpplug.param_text import params_text
from dpplug.randomness import RandomSource, default_source
from dpplug.surfaces import ACCURACY, GUARANTEE, MECHANISM_NOT_SURFACES, Dimension, Surface

#: The failure probability of the accuracy a release carries when the mechanism has no ``beta``.
DEFAULT_BETA = Fraction(1, 20)


class AccuracyScope(StrEnum):
    """What a releaser's declared :class:`~dpplug.guarantee.Accuracy` bounds."""

    #: The released total N: |N − n| ≤ a for the number of items n (per query and simultaneous
    #: are the same single bound).
    TOTAL = "total"
    #: Each released count by rank: |n_(i)(H) − n_(i)(h)| ≤ a (per query, for any one rank i)
    #: and for every rank at once (simultaneous), counts sorted non-increasing, zero-padded.
    SORTED_COUNTS = "sorted-counts"


@dataclass(frozen=True)
class Prevalences:
    """A validated anonymized histogram: (r, φ_r) pairs with r strictly increasing and φ_r ≥ 1,
    at most :data:`~dpplug.kinds.anonymized_histogram_releaser.outputs.MAX_ITEMS` items in all."""

    pairs: tuple[tuple[int, int], ...]

    @property
    def items(self) -> int:
        """n = Σ_r r·φ_r."""
        return sum(r * phi for r, phi in self.pairs)

    @property
    def counts(self) -> int:
        """The number of (positive) counts, Σ_r φ_r."""
        return sum(phi for _, phi in self.pairs)

    def as_dict(self) -> dict[int, int]:
        return dict(self.pairs)

    @classmethod
    def of_counts(cls, counts: Iterable[int]) -> Prevalences:
        """The anonymized histogram of already validated non-negative counts (zeros dropped)."""
        tally = Counter(c for c in counts if c)
        return cls(tuple(sorted(tally.items())))


def _items_within_limit(pairs: Iterable[tuple[int, int]], what: str) -> None:
    items = sum(r * phi for r, phi in pairs)
    if items > MAX_ITEMS:
        raise BadData(
            f"{what} holds {items} items, more than the {MAX_ITEMS} an anonymized histogram "
            f"release takes; bound the data first"
        )


class AnonymizedHistogramReleaser(Mechanism):
    """A releaser of anonymized histograms (see the module docstring).

    Required of a plugin:

    - the :class:`Mechanism` declarations, and ``accuracy_scope`` (an :class:`AccuracyScope`:
      what its declared accuracy bounds);
    - :meth:`_release` (validated prevalences, source) → an
      :class:`~dpplug.AnonymizedHistogram` (build it with :meth:`histogram`);
    - optionally :meth:`~dpplug.Mechanism.exact_structure` returning
      :class:`~dpplug.structures.ServedDraws`: every draw of the release is a
      :class:`~dpplug.program.Noise` request served by the source (a program run by
      :func:`dpplug.program.run`, or :func:`dpplug.program.noise`), so the conformance suite can
      check the guarantee exactly on tiny histograms from the noise transcripts of the real
      release.
    """

    accuracy_scope: ClassVar[AccuracyScope]

    def release(self, data: object, source: RandomSource | None = None) -> AnonymizedHistogram:
        """The private anonymized histogram of *data*: rows (an iterable of hashable labels) or
        a mapping label → count."""
        prevalences = self.prevalences(data)
        return self._release(prevalences, default_source(source))

    def release_prevalences(
        self, prevalences: object, source: RandomSource | None = None
    ) -> AnonymizedHistogram:
        """The private anonymized histogram given in compact form, a mapping r → φ_r."""
        checked = self.check_prevalences(prevalences)
        return self._release(checked, default_source(source))

    def prevalences(self, data: object) -> Prevalences:
        """The anonymized histogram of rows or of a mapping label → count; :class:`BadData`
        saying what to change. The caller's data is read, never modified."""
        if isinstance(data, Mapping):
            counts = [
                integer_scalar(count, 0, MAX_ITEMS, f"the count of {label!r}")
                for label, count in data.items()
            ]
            found = Prevalences.of_counts(counts)
        elif isinstance(data, str | bytes) or not isinstance(data, Iterable):
            raise BadData(
                f"{self.name} takes rows (an iterable of labels), a mapping label → count, or "
                f"prevalences through release_prevalences; got {type(data).__name__}"
            )
        else:
            try:
                found = Prevalences.of_counts(Counter(data).values())
            except TypeError as exc:  # an unhashable label
                raise BadData(f"rows must be hashable labels ({exc})") from None
        _items_within_limit(found.pairs, "the data")
        return found

    def check_prevalences(self, prevalences: object) -> Prevalences:
        """A mapping r → φ_r (r ≥ 1, φ_r ≥ 0 integers) validated; :class:`BadData` otherwise."""
        if not isinstance(prevalences, Mapping):
            raise BadData(
                f"prevalences must be a mapping r → φ_r (how many labels have count r), got "
                f"{type(prevalences).__name__}"
            )
        counts, labels = list(prevalences.keys()), list(prevalences.values())
        if _plain_within(counts, 1) and _plain_within(labels, 0):  # every pair is valid
            pairs = sorted(pair for pair in zip(counts, labels, strict=True) if pair[1])
        else:
            pairs = []
            for r, phi in prevalences.items():
                count = integer_scalar(r, 1, MAX_ITEMS, "a count r in the prevalences")
                times = integer_scalar(phi, 0, MAX_ITEMS, f"the prevalence φ_{count}")
                if times:
                    pairs.append((count, times))
            pairs.sort()
        _items_within_limit(pairs, "the prevalences")
        return Prevalences(tuple(pairs))

    def release_accuracy(self) -> Accuracy:
        """The accuracy a release carries: at the mechanism's ``beta`` (1/20 without one),
        computed once per mechanism (its parameters never change)."""
        if "_release_accuracy" not in self.__dict__:
            beta = self.params.get("beta")
            self.__dict__["_release_accuracy"] = self.accuracy(
                DEFAULT_BETA if beta is None else beta
            )
        accuracy: Accuracy = self.__dict__["_release_accuracy"]
        return accuracy

    def histogram(self, prevalences: Mapping[int, int], total: int) -> AnonymizedHistogram:
        """The release of *prevalences* (zeros dropped, canonical order by r) and *total*, with
        this mechanism's guarantee, accuracy and parameters."""
        return AnonymizedHistogram(
            prevalences={
                int(r): int(prevalences[r]) for r in sorted(prevalences) if prevalences[r]
            },
            total=int(total),
            guarantee=self.guarantee,
            accuracy=self.release_accuracy(),
            mechanism=self.name,
            params=dict(self._params_text()),
        )

    def _params_text(self) -> dict[str, Any]:
        """The parameters as a release records them, written once per mechanism (each release
        gets its own copy)."""
        if "_release_params" not in self.__dict__:
            self.__dict__["_release_params"] = params_text(self.params)
        texts: dict[str, Any] = self.__dict__["_release_params"]
        return texts

    @abstractmethod
    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        """The release for validated prevalences, drawn from *source*."""


@hookspec
def register_anonymized_histogram_releasers(register: Register) -> None:
    """Register anonymized-histogram releasers: ``register(cls)`` for each subclass of
    :class:`dpplug.AnonymizedHistogramReleaser`."""


class AnonymizedHistogramReleaserKind(Kind):
    """The anonymized-histogram-releaser kind (see the module docstring)."""

    name = "anonymized-histogram-releaser"
    hookspec = staticmethod(register_anonymized_histogram_releasers)
    base = AnonymizedHistogramReleaser
    relations = (Relation.SORTED_L1,)
    data_form = DataForm.LABELS
    pipeline_role = PipelineRole.CENTRAL_RELEASE
    summary = "the multiset of a dataset's counts, without labels (prevalences and a total)"
    surfaces = (
        Surface(
            "release",
            "the anonymized histogram of rows or of a mapping label → count, and its estimators",
            (
                Dimension.LAW,
                Dimension.RELATIONS,
                Dimension.SIZE,
                Dimension.FORMS,
                Dimension.STATE,
                Dimension.WHOLE,
            ),
        ),
        Surface(
            "release_prevalences",
            "the release from prevalences {r: φ_r} (PipelineDP's central route)",
            (Dimension.LAW, Dimension.SIZE, Dimension.FORMS),
        ),
        GUARANTEE,
        ACCURACY,
    )
    not_surfaces = MECHANISM_NOT_SURFACES | {
        "prevalences": "validation of rows and mappings, before anything is drawn (bad-input)",
        "check_prevalences": "validation of prevalences, before anything is drawn (bad-input)",
        "histogram": "builds the release from released values (part of the release surface)",
        "release_accuracy": "the accuracy each release carries (part of the whole release)",
        "accuracy_scope": "declared (declaration)",
    }

    def declaration_problems(self, mechanism: Mechanism) -> list[str]:
        problems = super().declaration_problems(mechanism)
        if not isinstance(getattr(mechanism, "accuracy_scope", None), AccuracyScope):
            problems.append("accuracy_scope must be an AccuracyScope (total or sorted-counts)")
        if mechanism.guarantee.neighbouring.sensitivity != 1:
            problems.append("the guarantee must be for sorted-ℓ₁ distance 1 (sensitivity 1)")
        return problems

    def privacy_bound(self, mechanism: Mechanism, distance: Any) -> LossBound:
        """Label counts at l01inf distance (l₀, l₁, l∞) differ by at most k = min(l₁, l₀·l∞) in
        ℓ₁ over the labels. Their anonymized histograms are at sorted-ℓ₁ distance at most k:
        the sorted-ℓ₁ distance is the smallest ℓ₁ distance over all labellings (Suresh 2019,
        Lemma 1 and Eq. 2), and the given labelling is one of them. Histograms at sorted-ℓ₁
        distance k are joined by k neighbouring steps (move one sorted count one step towards
        the other histogram's; each step lowers the distance by exactly one), so group privacy
        over k steps of the guarantee's relation gives the bound. Label vectors at symmetric
        distance k are (k, k, k) apart."""
        if not isinstance(distance, LabelDistance):
            raise TypeError(
                f"an anonymized releaser's distance is a LabelDistance, got {distance!r}"
            )
        return mechanism.guarantee.group(min(distance.l1, distance.l0 * distance.linf))

    def apply(
        self, mechanism: Mechanism, data: Any, source: RandomSource | None = None
    ) -> AnonymizedHistogram:
        """The :class:`~dpplug.AnonymizedHistogram` itself: its prevalences and
        total are plain values (``to_dict()``), and its estimators are post-processing."""
        return _releaser(mechanism).release(data, source)

    def central_plan(self, cls: type[Mechanism]) -> CentralPlan:
        """Counts of counts folded in the engine ({count: 1} per label, merged by adding), and
        one release from the prevalences."""
        return CentralPlan(per_bin=_one_count, combine=_merge, empty={}, finish=_release)


def _one_count(_public: None, _label: Any, count: int) -> dict[int, int]:
    return {int(count): 1}


def _merge(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    """Folds the smaller tally into the larger, in place: the engine owns both (each per-bin
    tally is fresh), and copying would make the fold quadratic in the number of labels."""
    if len(a) < len(b):
        a, b = b, a
    for r, phi in b.items():
        a[r] = a.get(r, 0) + phi
    return a


def _release(mechanism: Mechanism, _public: None, prevalences: dict[int, int]) -> Any:
    return _releaser(mechanism).release_prevalences(prevalences)


def _releaser(mechanism: Mechanism) -> AnonymizedHistogramReleaser:
    assert isinstance(mechanism, AnonymizedHistogramReleaser), mechanism
    return mechanism


ANONYMIZED_HISTOGRAM_RELEASER = AnonymizedHistogramReleaserKind()
AnonymizedHistogramReleaser.kind = ANONYMIZED_HISTOGRAM_RELEASER


def _plain_within(values: list[Any], low: int) -> bool:
    """Whether every one of *values* is a plain ``int`` in [low, MAX_ITEMS] (C-level passes;
    anything else goes through :func:`integer_scalar`, which names the first bad one)."""
    return set(map(type, values)) <= {int} and (
        not values or (low <= min(values) and max(values) <= MAX_ITEMS)
    )
