"""Histogram releasers (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from gmpy2 import mpq

import dpplug
from dpplug.guarantee import Guarantee, Neighbouring, Relation
from dpplug.kinds import DenseHistogram, TrueCounts
from dpplug.param_types import INTEGER, RATIONAL, UNIVERSE
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE
from dpplug.program import noise
from dpplug.structures import ServedDraws


class RowsInText(BasicHistogramReleaser):
    """FLAW: the release's ``mechanism`` text ends with the true number of rows ("for logs"):
    invariant under replace-one, but one row added or removed (which the adapters map through
    the replace-one guarantee) changes it deterministically."""

    name = "rtg-hist-rows-in-text"
    summary = "basic-histogram whose release records the rows it was computed from."

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        release = super()._release(counts, source)
        return dataclasses.replace(release, mechanism=f"{release.mechanism} [{counts.rows} rows]")


class DeltaOnce(BasicHistogramReleaser):
    """FLAW: the replace-one guarantee squares the sampler's e^ε but keeps its δ once (two
    counts move, so (2ε, 2δ) is the composition): wrong for approximate samplers such as
    truncated-geometric."""

    name = "rtg-hist-delta-once"
    summary = "basic-histogram whose guarantee composes ε over the two counts, δ once."

    @property
    def guarantee(self) -> Guarantee:
        per_count = self.sampler.guarantee
        return Guarantee(per_count.exp_epsilon**2, per_count.delta, REPLACE_ONE)


class _Geometric(dpplug.HistogramReleaser):
    """The docs' geometric histogram (GeoSample on every label)."""

    schema = dpplug.Schema(
        (
            dpplug.Param("universe", UNIVERSE, "The public labels.", example='"range:0:9"'),
            dpplug.Param("n", INTEGER, "The public bound on rows.", low=1, high=10**4),
            dpplug.Param(
                "epsilon", RATIONAL, "ε for one row replaced.", low=0, high=4, low_open=True
            ),
        )
    )
    conformance_cases = ({"universe": "range:0:2", "n": 2, "epsilon": 1},)
    reference = "Balcer & Vadhan 2018, Alg. 5.1 with GeoSample"
    share: Any = None

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe, self.n = self.params["universe"], self.params["n"]
        if self.universe.size > 10**4:
            raise dpplug.BadParameter("universe too large: at most 10^4 labels")
        self.sampler = self.registry_in_use().create(
            "geosample", n=self._sampler_n(), epsilon=self.params["epsilon"] * self.share
        )

    def _sampler_n(self) -> int:
        return self.n

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        return dpplug.Accuracy(per_bin, dpplug.ErrorBound(everywhere, beta), 0, "union bound")

    def exact_structure(self) -> ServedDraws:
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        noisy = noise(self.sampler, dense, source)
        return DenseHistogram(self.universe, noisy, self.guarantee, self.accuracy(0.05), repr(self))


class ClampUniverse(_Geometric):
    """FLAW: the sampler's count bound is min(n, |X|) (the author read GeoSample's n as "the
    number of bins"): a dataset with a count above |X| makes the release raise, so whether a
    release exists depends on the data."""

    name = "rtg-hist-clamp-universe"
    summary = "GeoSample noise on every label (pure DP, replace one row), sampler sized by bins."
    share = mpq(1, 2)

    def _sampler_n(self) -> int:
        return min(self.n, self.universe.size)

    @property
    def guarantee(self) -> dpplug.Guarantee:
        per_count = self.sampler.guarantee.exp_epsilon
        return dpplug.Guarantee(per_count**2, 0, Neighbouring(Relation.REPLACE_ONE))


class AddRemoveGeometric(_Geometric):
    """CONTROL: GeoSample at the whole ε on every label, stated for one row added or removed
    (one count moves by one): e^ε exactly, no replace-one claim."""

    name = "rtg-ok-hist-addremove"
    summary = "GeoSample noise at ε on every label; add/remove one row."
    share = 1

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(
            self.sampler.guarantee.exp_epsilon, 0, Neighbouring(Relation.ADD_REMOVE)
        )


class EpsilonCeil3(BasicHistogramReleaser):
    """FLAW: the sampler's share ε/2 is written with 3 decimals rounded up ("never less noise
    than asked" misapplied: rounding ε up gives less noise): ε = 2/3 builds the sampler at 0.334,
    and the (honestly reported) guarantee exceeds the ε asked for."""

    name = "rtg-hist-eps-ceil3"
    summary = "basic-histogram with the sampler's ε share written to 3 decimals."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        import math

        share = math.ceil(float(self.params["epsilon"]) / 2 * 1000) / 1000
        self.sampler = self.registry_in_use().create(
            self.params["sampler"],
            n=self.n,
            epsilon=mpq(str(share)),
            **dict(self.params["sampler_options"]),
        )
        self.derived = {"sampler": repr(self.sampler)}
