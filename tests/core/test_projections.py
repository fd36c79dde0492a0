"""The random projection's hash and release (dpplug.kinds.query_releaser.projections; Blum & Roth
2013, Def. 4.3, Remark 4.4): the trinomial fields, r-wise independence of the ±1 entries proved by
enumerating every polynomial over small fields, both evaluation paths against a reference GF(2^s)
implementation, answers equal to ⟨Q̂, u⟩/n when the sums carry no noise, and serialisation that
treats bytes as untrusted."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from typing import Any

import flint
import numpy as np
import pytest

import dpplug
from dpplug.errors import BadData
from dpplug.kinds.query_releaser.projections import (
    SLICED_FROM,
    ProjectionHash,
    ProjectionShape,
    SparseProjection,
    field_bits,
)
from dpplug.randomness import SeededSource

from support.projection_case import PROJECTION


def gf2_multiply(a: int, b: int, exponent: int) -> int:
    """Reference GF(2^s) product: carry-less multiplication, reduced by y^s + y^{s/2} + 1."""
    s = field_bits(exponent)
    product = 0
    while b:
        if b & 1:
            product ^= a
        a <<= 1
        b >>= 1
    for degree in range(product.bit_length() - 1, s - 1, -1):
        if product >> degree & 1:
            product ^= (1 << degree) | (1 << (degree - s // 2)) | (1 << (degree - s))
    return product


def reference(projection_hash: ProjectionHash, point: int) -> int:
    """f(point) by Horner's rule in the reference arithmetic."""
    value = 0
    for coefficient in reversed(projection_hash.coefficients):
        value = gf2_multiply(value, point, projection_hash.shape.exponent) ^ coefficient
    return value


def bits_of(value: int, width: int) -> list[int]:
    return [value >> i & 1 for i in range(width)]


@pytest.mark.parametrize("exponent", range(5))
def test_trinomials_are_irreducible(exponent: int) -> None:
    """y^{2·3^l} + y^{3^l} + 1 = Φ_{3^{l+1}}(y) is irreducible over GF(2)."""
    half = 3**exponent
    coefficients: list[Any] = [1] + [0] * (half - 1) + [1] + [0] * (half - 1) + [1]
    trinomial = flint.fmpz_mod_poly_ctx(2)(coefficients)
    assert trinomial.degree() == field_bits(exponent) and trinomial.is_irreducible()


def _entry_table(
    exponent: int, rank: int, dimension: int, labels: list[int]
) -> list[tuple[int, ...]]:
    """For every polynomial of degree < r over GF(2^s): the bits of every entry (row, label)."""
    shape = ProjectionShape(dimension, rank, exponent)
    size = 1 << shape.bits
    table = []
    for coefficients in itertools.product(range(size), repeat=rank):
        columns = ProjectionHash(shape, coefficients).columns(labels)
        table.append(tuple(int(v > 0) for v in columns.T.reshape(-1)))
    return table


@pytest.mark.parametrize(
    ("exponent", "rank", "dimension", "labels"),
    [(0, 2, 2, [0, 1, 2, 3]), (0, 3, 2, [0, 1, 2, 3]), (1, 2, 8, [0, 1, 5, 31])],
)
def test_entries_are_exactly_r_wise_independent_and_unbiased(
    exponent: int, rank: int, dimension: int, labels: list[int]
) -> None:
    """Over all |F|^r polynomials, every r entries of A take every sign pattern equally often
    (so their joint law is uniform). Independence does not go on for ever: on GF(4), whose
    points sum to 0 under any polynomial of degree < 3, the low bits of all four points are
    dependent, which the same count detects (the check can fail)."""
    table = _entry_table(exponent, rank, dimension, labels)
    entries = len(table[0])

    def uniform(chosen: tuple[int, ...]) -> bool:
        patterns = Counter(tuple(row[i] for i in chosen) for row in table)
        return len(patterns) == 2 ** len(chosen) and len(set(patterns.values())) == 1

    for chosen in itertools.combinations(range(entries), rank):
        assert uniform(chosen), chosen
    if exponent == 0:
        low_bits = tuple(range(len(labels)))  # row 0 of every label: bit 0 of f at each point
        assert not uniform(low_bits)


@pytest.mark.parametrize("exponent", [0, 2, 4])
def test_both_evaluation_paths_agree_with_the_reference(exponent: int) -> None:
    rng = random.Random(exponent)
    s = field_bits(exponent)
    shape = ProjectionShape(3 * s, 5, exponent)
    projection_hash = ProjectionHash(shape, tuple(rng.getrandbits(s) for _ in range(5)))
    points = [rng.getrandbits(s) for _ in range(SLICED_FROM + 9)]
    expected = np.array([bits_of(reference(projection_hash, p), s) for p in points], np.uint8)
    assert np.array_equal(projection_hash._evaluate_each(points), expected)
    assert np.array_equal(projection_hash._evaluate_sliced(points), expected)
    assert np.array_equal(projection_hash.evaluate(points[:3]), expected[:3])


def test_columns_and_sums_follow_the_points() -> None:
    shape = ProjectionShape.fitting(20, 4, 100)
    assert shape.bits >= 20 and (1 << shape.bits) >= 100 * shape.blocks
    projection_hash = shape.draw(SeededSource(3))
    columns = projection_hash.columns([7, 0, 99])
    assert columns.shape == (3, 20) and set(np.unique(columns)) <= {-1, 1}
    for row, label in zip(columns, [7, 0, 99], strict=True):
        points = [label * shape.blocks + b for b in range(shape.blocks)]
        bits = [bit for p in points for bit in bits_of(reference(projection_hash, p), shape.bits)]
        assert list(row) == [2 * b - 1 for b in bits[:20]]
    sums = projection_hash.column_sums([7, 0, 99], [2, 5, 1])
    assert sums == list(2 * columns[0] + 5 * columns[1] + columns[2])


def test_answers_without_noise_are_the_projected_inner_product() -> None:
    """The test-only path: a SparseProjection built from exact column sums answers
    ⟨Q̂, u⟩/n = Σ_i P_i·S_i/(n·T·W), computed here from the ±1 columns, clamped to [0, 1]."""
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    counts = {3: 20, 17: 9, 64: 1}
    projection_hash = releaser.projection.draw(SeededSource(8))
    exact = projection_hash.column_sums(list(counts), list(counts.values()))
    projection = SparseProjection(releaser.declaration(), projection_hash, tuple(exact))
    queries = [{3: 1}, {17: Fraction(1, 2), 64: 1}, {5: 1, 3: Fraction(3, 8)}, {99: 1}]
    n, t, w = 50, 40, 8
    for query, answer in zip(queries, projection.answers(queries), strict=True):
        projected = np.zeros(t, dtype=np.int64)
        for label, weight in query.items():
            projected += int(weight * w) * projection_hash.columns([label])[0].astype(np.int64)
        inner = int(projected @ np.array(exact, dtype=np.int64))
        assert answer == min(max(Fraction(inner, n * t * w), Fraction(0)), Fraction(1))
    assert projection.answer({3: 1}) == projection.answers(queries)[0]


def test_a_release_round_trips_through_its_bytes() -> None:
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    release = releaser.release({3: 20, 17: 9}, SeededSource(9))
    data = release.to_bytes()
    again = SparseProjection.from_bytes(data)
    assert again.hash == release.hash and again.sums == release.sums
    assert again.guarantee == releaser.guarantee and again.accuracy == release.accuracy
    queries = [{3: 1}, {17: 1, 4: 0.5}]
    assert again.answers(queries) == release.answers(queries)


def _parts(data: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, body = data.partition(b"\n")
    return json.loads(head), body


def _join(header: dict[str, Any], body: bytes) -> bytes:
    return json.dumps(header).encode() + b"\n" + body


def _tampered(data: bytes) -> list[tuple[str, bytes]]:
    header, body = _parts(data)
    size = (field_bits(header["exponent"]) + 7) // 8
    cases = [
        ("empty", b""),
        ("no newline", data.replace(b"\n", b" ")),
        ("not JSON", b"{not json\n" + body),
        ("a list header", b"[1, 2]\n" + body),
        ("short body", data[:-1]),
        ("long body", data + b"\x00"),
        ("not bytes", data.decode("latin-1")),  # type: ignore[list-item]
    ]
    for key, value in [
        ("format", "dpplug-compact-histogram/1"),
        ("mechanism", "basic-histogram"),
        ("dimension", header["dimension"] + 1),
        ("rank", header["rank"] + 2),
        ("exponent", header["exponent"] + 1),
        ("sum_bytes", 0),
        ("sum_bytes", 10**6),
        ("sum_bytes", True),
        ("params", "n=50"),
        ("params", {**header["params"], "dimension": 41}),
        ("params", {**header["params"], "epsilon": -1}),
    ]:
        cases.append((f"{key}={value!r}", _join({**header, key: value}, body)))
    for key in ("params", "dimension", "mechanism"):
        cases.append((f"no {key}", _join({k: v for k, v in header.items() if k != key}, body)))
    oversized = bytearray(body)
    oversized[size - 1] = 0xFF  # the top byte of the first coefficient beyond s bits
    cases.append(("a coefficient beyond s bits", _join(header, bytes(oversized))))
    return cases


def test_untrusted_bytes_are_refused_with_bad_data() -> None:
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    data = releaser.release({3: 20}, SeededSource(10)).to_bytes()
    for what, tampered in _tampered(data):
        with pytest.raises(BadData, match="cannot read a sparse projection"):
            SparseProjection.from_bytes(tampered)
        assert what  # (named for the failure message)


def test_a_mechanism_that_is_not_installed_is_named() -> None:
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    header, body = _parts(releaser.release({3: 20}, SeededSource(10)).to_bytes())
    with pytest.raises(dpplug.UnknownMechanism, match="no-such-mechanism"):
        SparseProjection.from_bytes(_join({**header, "mechanism": "no-such-mechanism"}, body))


def test_the_guarantee_is_recomputed_from_the_parameters() -> None:
    """The header carries parameters, not a guarantee: a header whose ε was changed yields that
    ε's mechanism, with its guarantee, never a claimed one."""
    releaser = dpplug.create("sparse-projection", **PROJECTION)
    header, body = _parts(releaser.release({3: 20}, SeededSource(11)).to_bytes())
    changed = _join({**header, "params": {**header["params"], "epsilon": "3"}}, body)
    read = SparseProjection.from_bytes(changed)
    rebuilt = dpplug.create("sparse-projection", **{**PROJECTION, "epsilon": 3})
    assert read.guarantee == rebuilt.guarantee
    assert read.guarantee != releaser.guarantee
