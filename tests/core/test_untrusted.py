"""The one reader of untrusted bytes (dpplug.untrusted), through every output read back with it:
whatever the bytes, a dpplug error saying what could not be read, never another exception."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpplug
from dpplug.kinds import HISTOGRAM_RELEASER, QUERY_RELEASER
from dpplug.randomness import SeededSource
from dpplug.untrusted import MAX_HEADER_BYTES, document, fields, reading, rebuild

from support.projection_case import PROJECTION


def _projection() -> bytes:
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    return bytes(releaser.release({3: 20}, SeededSource(1)).to_bytes())


def _anonymized() -> bytes:
    releaser = dpplug.create("sorted-histogram", epsilon=1, length=4)
    return bytes(releaser.release({"a": 3, "b": 1}, SeededSource(2)).to_bytes())


def _compact() -> bytes:
    releaser = dpplug.create("compact-histogram", universe="text:2", n=3, epsilon=1)
    return bytes(releaser.release(["a", "b", "a"], SeededSource(3)).to_bytes())


READERS: dict[str, tuple[Callable[[bytes], Any], Callable[[], bytes], str]] = {
    "projection": (dpplug.SparseProjection.from_bytes, _projection, "a sparse projection"),
    "anonymized": (dpplug.AnonymizedHistogram.from_bytes, _anonymized, "an anonymized histogram"),
    "compact": (dpplug.CompactHistogram.from_bytes, _compact, "a compact histogram"),
}


@pytest.mark.parametrize("name", READERS)
def test_each_reader_reads_back_what_it_wrote(name: str) -> None:
    read, written, _ = READERS[name]
    assert read(written()).to_bytes() == written()


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000 + b"\n",  # JSON nested deeper than the interpreter recurses
        b"{" * 50_000 + b"\n",
        b" " * (MAX_HEADER_BYTES + 1) + b"\n",
        b"\n",
        b"\xff\n",
        b"1e400\n",
        b'{"format": []}\n',
    ],
)
def test_malformed_bytes_are_bad_data(name: str, data: bytes) -> None:
    read, _, what = READERS[name]
    with pytest.raises(dpplug.BadData, match=f"cannot read {what} from these bytes"):
        read(data)


@pytest.mark.parametrize("name", READERS)
@settings(max_examples=60, deadline=None)
@given(cut=st.integers(0, 400), flip=st.integers(0, 255))
def test_damaged_bytes_are_read_or_refused_with_a_dpplug_error(
    name: str, cut: int, flip: int
) -> None:
    read, written, _ = READERS[name]
    data = bytearray(written())
    data[cut % len(data)] ^= flip
    with contextlib.suppress(dpplug.DpplugError):  # anything else fails the test
        read(bytes(data))


def test_a_mechanism_of_another_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="is a sampler, not a histogram-releaser"):
        rebuild("geosample", {"n": 3, "epsilon": "1"}, HISTOGRAM_RELEASER, None)
    with pytest.raises(dpplug.UnknownMechanism, match="no-such"):
        rebuild("no-such", {}, QUERY_RELEASER, None)
    with pytest.raises(ValueError, match="strings, integers or booleans"):
        rebuild("geosample", {"n": [3]}, HISTOGRAM_RELEASER, None)


def test_fields_must_be_exactly_the_expected_ones_of_their_json_types() -> None:
    types = {"format": str, "n": int}
    fields({"format": "f/1", "n": 3}, types, "f/1")
    for found in ({"format": "f/2", "n": 3}, {"format": "f/1"}, {"format": "f/1", "n": True}):
        with pytest.raises(ValueError):
            fields(found, types, "f/1")


def test_reading_turns_failures_into_bad_data_and_keeps_dpplug_errors() -> None:
    unreadable = "cannot read a thing from these bytes: 'boom'"
    with pytest.raises(dpplug.BadData, match=unreadable), reading("a thing"):
        raise KeyError("boom")
    with pytest.raises(dpplug.UnknownMechanism), reading("a thing"):
        raise dpplug.UnknownMechanism("x")
    with pytest.raises(dpplug.BadData, match="more than 5 bytes"), reading("a thing"):
        document(b"{}" + b" " * 10, 5)
