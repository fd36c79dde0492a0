"""Universes (dpplug.universe): the label ↔ index bijection, canonical order, sizes and specs.

Canonical order is index order (Balcer & Vadhan, full version §2.2.1: released collections are
sorted by a data-independent key). Each universe type is checked against an independent order key:
the integer itself, the declared position, and shortlex (length first, then the byte or code-point
sequence) for strings."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

import dpplug
from dpplug.universe import (
    MAX_UNIVERSE_SIZE,
    ByteStrings,
    IntegerRange,
    Labels,
    TextStrings,
    Universe,
    parse_universe,
)

SCALARS = 0x110000 - 0x800  # Unicode scalar values: code points minus the 2048 surrogates


def shortlex_key(label: bytes | str) -> tuple[int, list[int]]:
    return len(label), list(label) if isinstance(label, bytes) else [ord(c) for c in label]


def assert_round_trip(universe: Universe, indices: list[int]) -> list[object]:
    """label(index(x)) == x and index(label(i)) == i for every given index; returns the labels."""
    labels = [universe.label(i) for i in indices]
    for i, label in zip(indices, labels, strict=True):
        assert universe.index(label) == i
        assert label in universe
        assert universe.label(universe.index(label)) == label
    return labels


def boundary_indices(size: int, extra: int = 300, seed: int = 0) -> list[int]:
    """The first and last 50 indices and *extra* random ones, sorted and distinct."""
    rng = random.Random(seed)
    picked = set(range(min(50, size))) | set(range(max(0, size - 50), size))
    picked |= {rng.randrange(size) for _ in range(extra)}
    return sorted(picked)


# --- IntegerRange ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high"), [(0, 0), (0, 9), (-5, 3), (-20, -11), (10**30, 10**30 + 7)]
)
def test_integer_range_bijection_and_order(low: int, high: int) -> None:
    universe = IntegerRange(low, high)
    assert universe.size == high - low + 1
    labels = assert_round_trip(universe, list(range(universe.size)))
    assert labels == list(range(low, high + 1))  # index order = numeric order
    assert universe.index(np.int64(low) if abs(low) < 2**62 else low) == 0
    for outside in (low - 1, high + 1):
        assert outside not in universe
        with pytest.raises(dpplug.BadData, match="not in the universe"):
            universe.index(outside)


@pytest.mark.parametrize("label", [True, False, np.bool_(True), 1.0, Fraction(1), "1", None, [1]])
def test_integer_range_rejects_non_integers(label: object) -> None:
    universe = IntegerRange(0, 3)
    assert label not in universe
    with pytest.raises(dpplug.BadData):
        universe.index(label)


# --- Labels ------------------------------------------------------------------------------------


def test_labels_order_is_the_declared_order() -> None:
    declared = ["zebra", 7, "apple", -3, "é", "", 0]
    universe = Labels(declared)
    assert universe.size == len(declared)
    assert assert_round_trip(universe, list(range(len(declared)))) == declared
    assert universe.index(np.int64(7)) == 1  # numpy integers are integer labels


@pytest.mark.parametrize(
    "label", [1.0, Fraction(7), 7.0, True, np.bool_(False), b"zebra", None, ["a"]]
)
def test_labels_reject_what_was_not_declared(label: object) -> None:
    """Only str and integer labels match: 7.0 is not the integer label 7 (as in IntegerRange),
    and False is not the label 0."""
    universe = Labels(["zebra", 7, 0])
    assert label not in universe
    with pytest.raises(dpplug.BadData, match="not in the universe"):
        universe.index(label)


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        ([], "at least one"),
        (["a", "a"], "twice"),
        ([1, 1], "twice"),
        ([1.5], "str or int"),
        ([True], "str or int"),
        ([None], "str or int"),
        ([("a",)], "str or int"),
    ],
)
def test_bad_label_declarations(labels: list[object], match: str) -> None:
    with pytest.raises(dpplug.BadParameter, match=match):
        Labels(labels)


# --- ByteStrings -------------------------------------------------------------------------------


@pytest.mark.parametrize("max_length", [0, 1, 2, 3, 8, 20])
def test_byte_strings_size_is_the_sum_of_powers(max_length: int) -> None:
    assert ByteStrings(max_length).size == sum(256**k for k in range(max_length + 1))


def test_bytes_8_has_about_2_to_the_64_labels() -> None:
    universe = parse_universe("bytes:8")
    assert universe.size == (256**9 - 1) // 255
    assert 2**64 < universe.size < 2**65


def test_byte_strings_all_of_length_two_in_shortlex_order() -> None:
    universe = ByteStrings(2)
    labels = assert_round_trip(universe, list(range(universe.size)))
    assert len(set(labels)) == universe.size == 1 + 256 + 65536
    assert labels == sorted(labels, key=shortlex_key)
    assert all(isinstance(label, bytes) and len(label) <= 2 for label in labels)


def test_byte_strings_shortlex_edges() -> None:
    universe = ByteStrings(3)
    assert universe.index(b"") == 0 and universe.label(0) == b""
    assert universe.index(b"\x00") == 1
    assert universe.index(b"\xff") == 256
    assert universe.index(b"\x00\x00") == 257  # the first word of length 2 follows b"\xff"
    assert universe.index(b"\xff\xff") == 256 + 65536
    assert universe.index(b"\x00\x00\x00") == 257 + 65536
    assert universe.label(universe.size - 1) == b"\xff\xff\xff"
    labels = assert_round_trip(universe, boundary_indices(universe.size))
    assert labels == sorted(labels, key=shortlex_key)


def test_byte_strings_8_round_trip_at_the_edges() -> None:
    universe = ByteStrings(8)
    labels = assert_round_trip(universe, boundary_indices(universe.size, seed=8))
    assert labels == sorted(labels, key=shortlex_key)
    assert universe.label(universe.size - 1) == b"\xff" * 8
    assert universe.index(b"\x00" * 8) == sum(256**k for k in range(8))


@pytest.mark.parametrize("label", [b"abcd", bytearray(b"ab"), "ab", 1, None])
def test_byte_strings_reject_other_labels(label: object) -> None:
    universe = ByteStrings(3)
    assert label not in universe
    with pytest.raises(dpplug.BadData):
        universe.index(label)


# --- TextStrings -------------------------------------------------------------------------------


def test_text_strings_size_counts_scalar_values_only() -> None:
    for max_length in (0, 1, 2, 5):
        assert TextStrings(max_length).size == sum(SCALARS**k for k in range(max_length + 1))
    assert SCALARS == 1_112_064


def test_text_strings_shortlex_edges_and_surrogates() -> None:
    universe = TextStrings(2)
    assert universe.index("") == 0 and universe.label(0) == ""
    assert universe.index("\x00") == 1
    assert universe.index("\ud7ff") == 0xD7FF + 1
    assert universe.index("\ue000") == 0xD800 + 1  # the surrogates take no indices
    assert universe.label(0xD800 + 1) == "\ue000"
    assert universe.index("\U0010ffff") == SCALARS
    assert universe.index("\x00\x00") == SCALARS + 1
    assert universe.label(universe.size - 1) == "\U0010ffff" * 2
    for bad in ("\ud800", "\udfff", "a\udc00", "\ud83d\ude00", "abc", b"a", 0, None):
        assert bad not in universe
        with pytest.raises(dpplug.BadData):
            universe.index(bad)
    assert "😀" in universe  # one scalar value, not a surrogate pair


def test_text_strings_round_trip_around_the_surrogates() -> None:
    universe = TextStrings(3)
    around = list(range(0xD7F0 + 1, 0xD810 + 1)) + list(range(SCALARS - 5, SCALARS + 5))
    indices = sorted(set(around) | set(boundary_indices(universe.size, seed=3)))
    labels = assert_round_trip(universe, indices)
    assert labels == sorted(labels, key=shortlex_key)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for label in labels for c in label)


def test_text_strings_order_of_random_strings_is_shortlex() -> None:
    rng = random.Random(5)
    universe = TextStrings(4)
    pool = [c for c in map(chr, range(0x10FFFF + 1)) if not 0xD800 <= ord(c) <= 0xDFFF]
    words = {"".join(rng.choice(pool) for _ in range(rng.randrange(5))) for _ in range(500)}
    by_index = sorted(words, key=universe.index)
    assert by_index == sorted(words, key=shortlex_key)
    for word in words:
        assert universe.label(universe.index(word)) == word


# --- specs -------------------------------------------------------------------------------------

UNIVERSES = [
    IntegerRange(0, 999),
    IntegerRange(-7, -7),
    Labels(["a", "b", 3, "ünï côdé", 'quote"']),
    ByteStrings(0),
    ByteStrings(8),
    TextStrings(16),
]


@pytest.mark.parametrize("universe", UNIVERSES, ids=lambda u: u.spec)
def test_spec_round_trip(universe: Universe) -> None:
    again = parse_universe(universe.spec)
    assert again == universe and hash(again) == hash(universe)
    assert type(again) is type(universe) and again.size == universe.size
    assert [again.label(i) for i in range(min(universe.size, 20))] == [
        universe.label(i) for i in range(min(universe.size, 20))
    ]
    assert parse_universe(universe) is universe
    assert eval(repr(universe), {"parse_universe": parse_universe}) == universe


def test_spec_forms() -> None:
    assert parse_universe("range:-3:4") == IntegerRange(-3, 4)
    assert parse_universe("bytes:2") == ByteStrings(2)
    assert parse_universe("text:1") == TextStrings(1)
    assert parse_universe('labels:["x", 2]') == Labels(["x", 2])
    assert IntegerRange(0, 3) != IntegerRange(0, 4) and ByteStrings(2) != TextStrings(2)


@pytest.mark.parametrize(
    "spec",
    [
        "range:3",
        "range:a:b",
        "range:1:2:3",
        "range:",
        "range:5:1",
        "bytes:-1",
        "bytes:x",
        "bytes:",
        "text:1.5",
        "text:-2",
        "labels:{}",
        "labels:[]",
        "labels:[1.5]",
        "labels:[true]",
        'labels:["a", "a"]',
        "labels:[[1]]",
        "labels:",
        "labels:nope",
        "foo:1",
        "",
        "range",
        3,
        None,
        b"bytes:2",
        ["range:0:1"],
    ],
)
def test_bad_specs(spec: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        parse_universe(spec)


def test_bad_spec_values_keep_their_message() -> None:
    with pytest.raises(dpplug.BadParameter, match="twice"):
        parse_universe('labels:["a", "a"]')
    with pytest.raises(dpplug.BadParameter, match="low ≤ high"):
        parse_universe("range:5:1")
    with pytest.raises(dpplug.BadParameter, match="needs an integer L ≥ 0"):
        parse_universe("bytes:-1")


@pytest.mark.parametrize(
    "make",
    [
        lambda: IntegerRange(0.5, 3),
        lambda: IntegerRange(True, 3),
        lambda: ByteStrings(-1),
        lambda: ByteStrings(2.0),
        lambda: TextStrings(True),
    ],
)
def test_bad_constructor_arguments(make: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("spec", "largest"),
    [("bytes:1000000000", "bytes:127"), ("text:1000000000", "text:50"), ("bytes:128", "bytes:127")],
)
def test_universes_beyond_2_to_the_1024_are_refused_at_once_naming_the_limit(
    spec: str, largest: str
) -> None:
    with pytest.raises(dpplug.BadParameter, match=f"2\\^1024.*{largest}"):
        parse_universe(spec)


def test_the_largest_universes_work_at_their_edges() -> None:
    for spec in ("bytes:127", "text:50"):
        universe = parse_universe(spec)
        assert universe.size <= MAX_UNIVERSE_SIZE
        last = universe.label(universe.size - 1)
        assert universe.index(last) == universe.size - 1


@pytest.mark.parametrize("spec", [f"range:0:{2**1025}", f"range:-{2**1025}:0"])
def test_ranges_beyond_2_to_the_1024_are_refused(spec: str) -> None:
    with pytest.raises(dpplug.BadParameter, match="2\\^1024"):
        parse_universe(spec)


# --- Bulk indices ------------------------------------------------------------------------------


def bulk_list(universe: Universe, labels: list[object]) -> list[int]:
    found = universe.indices(labels)
    assert found is not None
    return found if isinstance(found, list) else [int(i) for i in found.tolist()]


def test_byte_strings_bulk_indices_equal_one_by_one_for_every_length_and_past_2_to_the_64() -> None:
    """Words of every length up to 8 (the numpy path), mixed, and words whose index passes 2^64
    (b'\\xff' * 8: the Python path): the bulk indices are the one-by-one ones."""
    rng = random.Random(5)
    universe = ByteStrings(8)
    below = [bytes(rng.randrange(256) for _ in range(rng.randrange(9))) for _ in range(500)]
    below += [bytes(rng.randrange(0xFE) for _ in range(8)) for _ in range(100)]
    for labels in (below, [*below, b"\xff" * 8, b"\xfe" + b"\xff" * 7], [b"ab"] * 100):
        assert bulk_list(universe, list(labels)) == [universe.index(x) for x in labels]
    assert max(bulk_list(universe, [*below, b"\xff" * 8])) >= 1 << 64


def test_byte_strings_bulk_indices_refuse_a_word_too_long() -> None:
    assert ByteStrings(3).indices([b"abc"] * 100 + [b"abcd"]) is None


@pytest.mark.parametrize(("low", "high"), [(-(1 << 63), (1 << 63) - 1), (-5, 3), (7, 1000)])
def test_integer_range_bulk_indices_equal_one_by_one_at_the_int64_edges(
    low: int, high: int
) -> None:
    universe = IntegerRange(low, high)
    labels = [low, high, *range(low, min(high, low + 100)), *range(max(low, high - 100), high)]
    assert bulk_list(universe, list(labels)) == [universe.index(x) for x in labels]
