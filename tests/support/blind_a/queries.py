"""Broken query releasers (red team A). Each class docstring states its flaw."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpplug.discrete_noise import discrete_laplace
from dpplug.kinds.query_releaser.projections import SparseProjection
from dpplug.kinds.query_releaser.queries import (
    Declaration,
    LabelCounts,
    QuerySession,
    SparseQuery,
    clamp,
)
from dpplug.plugins.queries.independent import IndependentLaplace
from dpplug.plugins.queries.projection import SparseProjectionReleaser
from dpplug.randomness import RandomSource

# --- a session answering from the releaser's index -------------------------------------------


class _IndexedSession(QuerySession):
    def __init__(
        self, declaration: Declaration, releaser: SharedIndex, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._releaser, self._scale, self._source = releaser, scale, source

    def _answer(self, query: SparseQuery) -> int:
        index = self._releaser._index
        true = sum(w * index.get(x, 0) for x, w in zip(query.labels, query.weights, strict=True))
        return clamp(true + discrete_laplace(self._scale, self._source), self.scale)


class SharedIndex(IndependentLaplace):
    """independent-laplace whose sessions read a label index kept on the releaser.

    FLAW (state across calls, reused instances): ``start`` builds the label → count index once
    and keeps it on the releaser "for its sessions to reuse"; a later ``start`` on other data
    replaces it, so every earlier session still open answers from the NEW data. A person only in
    the second dataset is then in the answers of two sessions: e^{2ε} where the second session
    declares e^ε (and the first session answers about data it was never given).
    """

    name = "rta-shared-index"
    summary = "independent-laplace with a label index shared by the releaser's sessions."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        self._index = dict(zip(counts.labels, counts.counts, strict=True))
        return _IndexedSession(self.declaration(), self, self.noise_scale, source)


# --- scaled answers with numpy ------------------------------------------------------------------


class _NumpySession(QuerySession):
    def __init__(
        self, declaration: Declaration, counts: LabelCounts, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._counts, self._scale, self._source = counts, scale, source

    def _answer(self, query: SparseQuery) -> int:
        weights = np.array(query.weights, dtype=np.int64)
        counts = np.array([self._counts.count(x) for x in query.labels], dtype=np.int64)
        true = int(np.dot(weights, counts))
        return clamp(true + discrete_laplace(self._scale, self._source), self.scale)


class NumpyDot(IndependentLaplace):
    """independent-laplace computing the scaled answer Σ w_x·c_x as an int64 dot product.

    FLAW (sizes up to the schema's limits): n ≤ 2^40 and W ≤ 2^32, so n·W reaches 2^72 but the
    int64 dot product wraps silently past 2^63: with W = 2^32, the count 2^31 gives the scaled
    answer −2^63 (released as 0) while its neighbour 2^31 − 1 gives 2^63 − 2^32 (released near
    the top): a likelihood ratio of about e^{2^31·ε}.
    """

    name = "rta-numpy-dot"
    summary = "independent-laplace with vectorised (numpy) scaled answers."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _NumpySession(self.declaration(), counts, self.noise_scale, source)


# --- labels compared by their text ------------------------------------------------------------


def _text(label: Any) -> str:
    return label.decode("utf-8", "replace") if isinstance(label, bytes) else str(label)


class _TextSession(QuerySession):
    def __init__(
        self, declaration: Declaration, counts: LabelCounts, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._by_text: dict[str, int] = {}
        for label, count in zip(counts.labels, counts.counts, strict=True):
            key = _text(label)
            self._by_text[key] = self._by_text.get(key, 0) + count
        self._scale, self._source = scale, source

    def _answer(self, query: SparseQuery) -> int:
        weights: dict[str, int] = {}
        for label, w in zip(query.labels, query.weights, strict=True):
            key = _text(label)
            weights[key] = weights.get(key, 0) + w
        true = sum(w * self._by_text.get(key, 0) for key, w in weights.items())
        return clamp(true + discrete_laplace(self._scale, self._source), self.scale)


class TextLabels(IndependentLaplace):
    """independent-laplace that compares labels by their text.

    FLAW (mixed label types): data and queries are matched by text, so 1, "1" and b"1" are one
    label ("CSV exports turn ints into text"). The core validates a query {1: 1, "1": 1,
    b"1": 1} as three distinct labels of weight 1 (3-sparse), but the session merges them into
    one label of weight 3: one row with label "1" moves the answer by 3W, three times the
    sensitivity the noise is calibrated for (e^{3ε₀} per answer against the declared e^{ε₀}).
    """

    name = "rta-text-labels"
    summary = "independent-laplace matching labels by their text (1, '1' and b'1' agree)."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _TextSession(self.declaration(), counts, self.noise_scale, source)


# --- a hash redrawn for the data ----------------------------------------------------------------

#: How often the hash is redrawn at most.
REDRAWS = 64


class RedrawnHash(SparseProjectionReleaser):
    """sparse-projection that redraws its hash until the data's labels get distinct columns.

    FLAW (a field of the returned object): "a hash under which two labels of the data have the
    same column cannot tell them apart", so the hash is redrawn (up to 64 times) while two of the
    data's labels collide. The released hash is public and then depends on the data: for two
    labels a, b, Pr[col_a = col_b] = 2^-T without b in the data and ≈ 0 with it (T = 8:
    δ ≥ 2^-8 ≈ 0.0039 against the declared 10^-4).
    """

    name = "rta-redrawn-hash"
    summary = "sparse-projection that avoids hashes confusing two of the data's labels."

    def _start(self, counts: LabelCounts, source: RandomSource) -> SparseProjection:
        universe = self.universe
        assert universe is not None
        indices = [universe.index(x) for x in counts.labels]
        projection_hash = self.projection.draw(source)
        for _ in range(REDRAWS):
            columns = projection_hash.columns(indices) if indices else np.zeros((0, 0))
            if len({column.tobytes() for column in columns}) == len(indices):
                break
            projection_hash = self.projection.draw(source)
        sums = projection_hash.column_sums(indices, counts.counts)
        return self._noisy(projection_hash, sums, source)


# --- no noise for labels nobody has ------------------------------------------------------------


class _AbsentLabelsSession(QuerySession):
    def __init__(
        self, declaration: Declaration, counts: LabelCounts, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._counts, self._scale, self._source = counts, scale, source

    def _answer(self, query: SparseQuery) -> int:
        if self._counts.rows and not any(self._counts.count(x) for x in query.labels):
            return 0  # nobody in the data has these labels: the true answer is exactly 0
        true = query.scaled_answer(self._counts)
        return clamp(true + discrete_laplace(self._scale, self._source), self.scale)


class AbsentLabelsExact(IndependentLaplace):
    """independent-laplace that answers 0 exactly for queries about labels nobody has.

    FLAW (neighbouring datasets): "a query none of whose labels occurs in the data cannot reveal
    anything about anyone", so it is answered 0 without noise. But adding one row with such a
    label makes the answer noisy: for D = {y: 1} and D + {x} the query {x: 1} is answered 0
    with probability 1 against q^W/(1 + q) (δ ≈ 1 − q^W/(1 + q) for a pure guarantee).
    """

    name = "rta-absent-labels-exact"
    summary = "independent-laplace skipping the noise of queries about absent labels."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _AbsentLabelsSession(self.declaration(), counts, self.noise_scale, source)


__all__ = [
    "AbsentLabelsExact",
    "NumpyDot",
    "RedrawnHash",
    "SharedIndex",
    "TextLabels",
]
