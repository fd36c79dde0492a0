"""Labels, label counts and sparse queries (dpplug.kinds.query_releaser.queries): canonical order
without a universe, validation before anything else, the n bound, rounding onto the grid 1/W (halves
up, exact), and sparsity counted on the rounded weights."""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpplug
from dpplug.errors import BadData, NotSupported
from dpplug.kinds.query_releaser.queries import (
    QuerySession,
    SparseQuery,
    Workload,
    canonical_label,
    label_counts,
    sparse_query,
)
from dpplug.randomness import SeededSource
from dpplug.universe import parse_universe

WORKLOAD = Workload(max_queries=5, sparsity=3, grid=4)


def test_labels_without_a_universe_sort_by_type_then_shortlex() -> None:
    labels = ["b", b"zz", 10, "aa", b"a", -3, "\u00e9", b""]
    ordered = sorted(labels, key=lambda x: canonical_label(x, None)[0])
    assert ordered == [-3, 10, b"", b"a", b"zz", "b", "\u00e9", "aa"]
    assert canonical_label(np.int64(7), None) == ((0, 7), 7)
    for bad in (True, np.bool_(False), 1.0, None, (1,), Fraction(1)):
        with pytest.raises(BadData, match="str, bytes or int"):
            canonical_label(bad, None)


def test_labels_with_a_universe_take_its_order_and_form() -> None:
    universe = parse_universe("range:5:9")
    assert canonical_label(np.int32(7), universe) == (2, 7)
    with pytest.raises(BadData, match="not in the universe"):
        canonical_label(10, universe)


def test_rows_and_mappings_give_the_same_counts() -> None:
    rows = label_counts(["b", 3, "b", b"x", 3, 3], 10, None, "test")
    mapping = label_counts({3: 3, "b": 2, b"x": 1, "zero": 0}, 10, None, "test")
    assert rows == mapping
    assert (rows.labels, rows.counts, rows.rows) == ((3, b"x", "b"), (3, 1, 2), 6)
    assert rows.count("b") == 2 and rows.count("absent") == 0
    merged = label_counts({1: 2, np.int64(2): 1}, 10, None, "test")
    assert merged.labels == (1, 2) and all(type(x) is int for x in merged.labels)


@pytest.mark.parametrize(
    "data",
    [
        ["a"] * 4,
        {"a": 3, "b": 1},
        {"a": 5},
        {"a": -1},
        {"a": 1.0},
        {"a": True},
        {"a": "1"},
        {1.5: 1},
        [None],
        "abc",
        b"abc",
        5,
        None,
    ],
    ids=repr,
)
def test_bad_data_is_refused_with_what_to_change(data: object) -> None:
    with pytest.raises(BadData):
        label_counts(data, 3, None, "test")


def test_too_many_rows_stop_the_reading() -> None:
    """An endless iterator is refused after n + 1 rows: validation takes bounded time."""
    with pytest.raises(BadData, match="more than n = 3 rows"):
        label_counts(itertools.repeat("a"), 3, None, "test")

    def counted() -> Iterator[str]:
        for i in itertools.count():
            yield f"x{i}"

    with pytest.raises(BadData, match="build it with a larger n"):
        label_counts(counted(), 1000, None, "test")


def test_rounding_is_to_the_nearest_grid_point_halves_up() -> None:
    query = sparse_query(
        {"a": Fraction(1, 8), "b": Fraction(3, 8), "c": 0.1, "d": Fraction(1, 9)}, WORKLOAD, None
    )
    # 1/8 → 0.5 grid steps → 1; 3/8 → 1.5 → 2; 0.1 → 0.4 → 0 (dropped); 1/9 → 0.44 → 0
    assert query.as_dict() == {"a": Fraction(1, 4), "b": Fraction(1, 2)}
    assert query.labels == ("a", "b") and query.weights == (1, 2) and query.grid == 4


def test_sparsity_counts_the_rounded_support_and_order_is_canonical() -> None:
    five = {f"x{i}": Fraction(1, 10) for i in range(5)}  # all round to 0 on the grid 1/4
    assert sparse_query({**five, "z": 1, "y": 0.5}, WORKLOAD, None).labels == ("y", "z")
    with pytest.raises(BadData, match="more than 3 labels"):
        sparse_query({f"x{i}": 1 for i in range(4)}, WORKLOAD, None)
    again = sparse_query({"y": 0.5, "z": 1}, WORKLOAD, None)
    assert again == sparse_query({"z": 1, "y": 0.5}, WORKLOAD, None)
    assert sparse_query(again, WORKLOAD, None) == again


class _Repeating(Mapping[Any, Any]):
    """A mapping whose items name one label twice (two spellings of the same int)."""

    def __repr__(self) -> str:
        return "_Repeating()"

    def __getitem__(self, key: Any) -> Any:
        return 1

    def __iter__(self) -> Iterator[Any]:
        return iter([1, np.int64(1)])

    def __len__(self) -> int:
        return 2

    def items(self) -> Any:
        return [(1, 1), (np.int64(1), 1)]


@pytest.mark.parametrize(
    "query",
    [
        {"a": math.nan},
        {"a": math.inf},
        {"a": -0.25},
        {"a": 1.5},
        {"a": "0.5"},
        {"a": None},
        {"a": True},
        {1.5: 1},
        {None: 1},
        ["a"],
        "a",
        None,
        _Repeating(),
    ],
    ids=repr,
)
def test_bad_queries_are_refused(query: object) -> None:
    with pytest.raises(BadData):
        sparse_query(query, WORKLOAD, None)


def test_queries_must_name_labels_of_a_declared_universe() -> None:
    universe = parse_universe('labels:["a", "b"]')
    assert sparse_query({"a": 1}, WORKLOAD, universe).labels == ("a",)
    with pytest.raises(BadData, match="not in the universe"):
        sparse_query({"c": 1}, WORKLOAD, universe)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=2),
        st.one_of(st.fractions(0, 1), st.floats(0, 1)),
        max_size=3,
    ),
    st.integers(1, 2**20),
)
def test_rounded_queries_are_within_half_a_grid_step(weights: dict[str, Any], grid: int) -> None:
    query = sparse_query(weights, Workload(1, 3, grid), None).as_dict()
    for label, weight in weights.items():
        exact = Fraction(weight)
        assert abs(query.get(label, Fraction(0)) - exact) <= Fraction(1, 2 * grid)


def test_scaled_answer_is_n_w_times_the_answer() -> None:
    counts = label_counts({"a": 3, "b": 5, "c": 1}, 10, None, "test")
    query = sparse_query({"a": 1, "b": 0.25, "z": 0.5}, WORKLOAD, None)
    assert query.scaled_answer(counts) == 4 * 3 + 1 * 5 + 2 * 0
    assert Fraction(query.scaled_answer(counts), 10 * 4) == (3 * 1 + 5 * Fraction(1, 4)) / 10


# --------------------------------------------------------------------------------------------
# sessions answer atomically: the k-answer bound holds under threads
# --------------------------------------------------------------------------------------------

THREADS = 16


def race(session: Any, query: Mapping[str, float]) -> int:
    """16 threads released at once, each asking *session* for one answer; how many got one."""
    barrier = threading.Barrier(THREADS)
    answered: list[Fraction] = []

    def ask() -> None:
        barrier.wait()
        with contextlib.suppress(NotSupported):
            answered.append(session.answer(query))

    threads = [threading.Thread(target=ask) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(answered)


SESSIONS = {
    "independent-laplace": {"n": 100, "epsilon": 1, "max_queries": 4, "sparsity": 2},
    "sparse-multiplicative-weights": {
        "n": 10**7,
        "epsilon": 8,
        "delta": Fraction(1, 10**5),
        "max_queries": 6,
        "sparsity": 2,
        "grid": 4,
    },
}


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_no_session_answers_more_than_k_queries_under_16_threads(name: str) -> None:
    """The issue's race (independent-laplace, k = 4: up to 16 answers in 6 of 20 trials; SMW,
    k = 6: in 8 of 10): now exactly k answers in every trial."""
    releaser = dpplug.create(name, **SESSIONS[name])
    k = SESSIONS[name]["max_queries"]
    for seed in range(20):
        session = releaser.start(["a"] * 60 + ["b"] * 40, SeededSource(seed))
        assert race(session, {"a": 1}) == k
        assert session.answered == k and session.remaining == 0


class _SlowSession(QuerySession):
    """Answers after a pause, which widens any window between the check against k and the
    count of answers to about a millisecond."""

    def _answer(self, query: SparseQuery) -> int:
        time.sleep(0.001)
        return 0


class _UnlockedSession(_SlowSession):
    """The answering loop as it was before the lock (the test's power check)."""

    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        parsed = [self.query(q) for q in queries]
        if len(parsed) > self.remaining:
            raise NotSupported("past k")
        released = [Fraction(self._answer(query), self.scale) for query in parsed]
        self.answered += len(parsed)
        return released


def test_the_lock_holds_where_the_window_is_wide_and_the_race_test_sees_an_unlocked_one() -> None:
    """With a millisecond between the check and the count, a locked session still answers k
    queries of 16 threads, and the same race makes an unlocked one answer more than k (so the
    test above can fail)."""
    declaration = dpplug.create("independent-laplace", **SESSIONS["independent-laplace"])
    declared = declaration.declaration()
    assert race(_SlowSession(declared), {"a": 1}) == 4
    assert race(_UnlockedSession(declared), {"a": 1}) > 4
