"""Blum & Roth's random projection data structure ("Fast Private Data Release Algorithms for
Sparse Queries", RANDOM 2013, Def. 4.3, Alg. 2, Remark 4.4): a noisy projection u + ν of the
dataset onto T dimensions, with the concise hash that defines the projection matrix.

**The hash** (:class:`ProjectionHash`). A uniformly random polynomial f of degree < r over the
binary field GF(2^s), s = 2·3^l, defined by the trinomial y^{2·3^l} + y^{3^l} + 1 (irreducible
over GF(2): it is the cyclotomic polynomial Φ_{3^{l+1}}, and 2 is a primitive root modulo every
power of 3). A field element is read as the s bits of its coordinates in the basis 1, y, y², ….
Label x (its universe index j_x) owns the B = ⌈T/s⌉ evaluation points j_x·B + b, b < B, and the
column of x is the first T bits of f(j_x·B), f(j_x·B + 1), …; entry A[i, x] is +1 or −1 as bit i
is 1 or 0 (the paper's ±1/√T with the 1/√T kept out, so everything stays an integer).

This is Remark 4.4's construction reading many output bits of one evaluation instead of one bit
of many: distinct labels have distinct points (2^s ≥ |X|·B), a uniform polynomial of degree < r
takes independent uniform values at any r distinct points (Vandermonde), and the s bits of a
uniform element of GF(2^s) are independent and unbiased. Any r entries of A lie in at most r
evaluations, so they are independent unbiased signs: the entries are r-wise independent, which
is what Thm 4.1 and Lemma 4.6 assume. Evaluating the hash at many points uses bit-sliced
arithmetic (all points at once, one bitwise operation per pair of coefficient bits); at few points
python-flint's GF(2^s) arithmetic; both compute the same field operations.

**The release** (:class:`SparseProjection`). With integer column sums S_i = Σ_x c_x·A[i, x] and
integer noise Z_i, the released Y_i = S_i + Z_i. A query with weights w_x = W·Q(x) has the
projection P_i = Σ_x w_x·A[i, x], and its answer is ⟨Q̂, u + ν⟩/n = Σ_i P_i·Y_i/(n·T·W), exactly
(Def. 4.3's evaluation with the 1/√T factors collected), clamped to [0, 1]. The answers depend on
the released Y and f only: the release is non-interactive, and answering more queries costs no
privacy (the accuracy covers k queries fixed before the release). ``to_bytes``/``from_bytes``
serialise it; reading rebuilds the mechanism from its name and parameters through the registry
and recomputes the guarantee and the accuracy from them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, cast

import flint
import numpy as np
import numpy.typing as npt

from dpplug.kinds.query_releaser.queries import Declaration, QueryAnswers, clamp
from dpplug.param_text import params_text
from dpplug.randomness import RandomSource
from dpplug.untrusted import fields, header_and_body, reading, rebuild

if TYPE_CHECKING:
    from dpplug.kinds.query_releaser.base import QueryReleaser
    from dpplug.plugin_registry import Registry

#: Evaluations at fewer points than this use python-flint one point at a time; more, the
#: bit-sliced evaluation of all points at once (which costs a fixed s²·r bitwise operations).
SLICED_FROM = 128
#: Rows of a column block materialised at once when summing columns (memory bound).
BLOCK_ENTRIES = 1 << 21
FORMAT = "dpplug-sparse-projection/1"
#: The fields of :meth:`SparseProjection.to_bytes`' header line, each with its JSON type.
_HEADER_TYPES = {
    "format": str,
    "mechanism": str,
    "params": dict,
    "dimension": int,
    "rank": int,
    "exponent": int,
    "sum_bytes": int,
}


def field_bits(exponent: int) -> int:
    """s = 2·3^l: the degree of the trinomial field GF(2^s)."""
    return int(2 * 3**exponent)


@cache
def _field(exponent: int) -> Any:
    """GF(2^s) as python-flint's field, with the trinomial modulus."""
    half = field_bits(exponent) // 2
    trinomial: list[Any] = [1] + [0] * (half - 1) + [1] + [0] * (half - 1) + [1]
    modulus = flint.fmpz_mod_poly_ctx(2)(trinomial)
    return flint.fq_default_ctx(modulus=modulus, fq_type="FQ_NMOD", check_modulus=False)


def _bits(values: Sequence[int], width: int) -> npt.NDArray[np.uint8]:
    """The low *width* bits of each integer, least significant first: a (len, width) array."""
    size = (width + 7) // 8
    raw = b"".join(v.to_bytes(size, "little") for v in values)
    table = np.frombuffer(raw, dtype=np.uint8).reshape(len(values), size)
    return np.unpackbits(table, axis=1, bitorder="little")[:, :width]


@dataclass(frozen=True)
class ProjectionShape:
    """The projection's public dimensions: T rows, the hash's independence r (degree < r) and
    the field GF(2^s), s = 2·3^l, with B = ⌈T/s⌉ evaluation points per label."""

    dimension: int
    rank: int
    exponent: int

    @property
    def bits(self) -> int:
        return field_bits(self.exponent)

    @property
    def blocks(self) -> int:
        return -(-self.dimension // self.bits)

    @classmethod
    def fitting(cls, dimension: int, rank: int, universe_size: int) -> ProjectionShape:
        """The smallest trinomial field whose elements hold min(T, 162) bits and all |X|·B
        points (so distinct labels never share a point)."""
        exponent = 0
        while True:
            shape = cls(dimension, rank, exponent)
            if (
                shape.bits >= min(dimension, field_bits(4))
                and (1 << shape.bits) >= universe_size * shape.blocks
            ):
                return shape
            exponent += 1

    def draw(self, source: RandomSource) -> ProjectionHash:
        """A uniformly random hash of this shape: r uniform field elements as coefficients."""
        return ProjectionHash(self, tuple(source.bits(self.bits) for _ in range(self.rank)))


@dataclass(frozen=True)
class ProjectionHash:
    """The polynomial f (coefficients low degree first, as s-bit integers) and its shape."""

    shape: ProjectionShape
    coefficients: tuple[int, ...]

    def __getstate__(self) -> dict[str, Any]:
        """Pickles without python-flint's polynomial, which is rebuilt where it is used."""
        return {k: v for k, v in self.__dict__.items() if k != "_polynomial"}

    @cached_property
    def _polynomial(self) -> Any:
        field = _field(self.shape.exponent)
        bits = _bits(self.coefficients, self.shape.bits)
        ring: Any = flint.fq_default_poly_ctx(field)
        return ring([field(row.tolist()) for row in bits])

    def evaluate(self, points: Sequence[int]) -> npt.NDArray[np.uint8]:
        """f at each point (an integer < 2^s read as a field element): a (len, s) bit array."""
        if len(points) < SLICED_FROM:
            return self._evaluate_each(points)
        return self._evaluate_sliced(points)

    def _evaluate_each(self, points: Sequence[int]) -> npt.NDArray[np.uint8]:
        s, field, f = self.shape.bits, _field(self.shape.exponent), self._polynomial
        out = np.zeros((len(points), s), dtype=np.uint8)
        for row, bits in enumerate(_bits(points, s)):
            value = [int(c) for c in f(field(bits.tolist())).to_list()]
            out[row, : len(value)] = value
        return out

    def _evaluate_sliced(self, points: Sequence[int]) -> npt.NDArray[np.uint8]:
        """Horner's rule on all points at once, bit-sliced: slice j holds bit j of every point
        (64 points a word), so a field product is s² ANDs and XORs of whole slices, and the
        reduction by y^s = y^{s/2} + 1 folds the high slices down."""
        s, half = self.shape.bits, self.shape.bits // 2
        count = len(points)
        words = -(-count // 64)
        padded = np.zeros((s, words * 64), dtype=np.uint8)
        padded[:, :count] = _bits(points, s).T
        x = np.packbits(padded, axis=1, bitorder="little").view(np.uint64).reshape(s, words)
        ones = np.full(words, np.uint64(0xFFFFFFFFFFFFFFFF))
        top = _bits(self.coefficients[::-1], s).astype(bool)
        acc = np.zeros((s, words), dtype=np.uint64)
        acc[top[0]] = ones
        product = np.zeros((2 * s - 1, words), dtype=np.uint64)
        for coefficient in top[1:]:
            product[:] = 0
            for j in range(s):
                product[j : j + s] ^= acc & x[j]
            high = 2 * s - 2
            while high >= s:  # fold down in blocks that never reach themselves
                low = max(s, high - half + 1)
                folded = product[low : high + 1]
                product[low - s : high + 1 - s] ^= folded
                product[low - s + half : high + 1 - s + half] ^= folded
                high = low - 1
            acc = product[:s].copy()
            acc[coefficient] ^= ones
        bits = np.unpackbits(acc.view(np.uint8).reshape(s, words * 8), axis=1, bitorder="little")
        return np.ascontiguousarray(bits[:, :count].T)

    def columns(self, indices: Sequence[int]) -> npt.NDArray[np.int8]:
        """The ±1 columns of the labels with these universe indices: a (len, T) array."""
        blocks, dimension = self.shape.blocks, self.shape.dimension
        points = [j * blocks + b for j in indices for b in range(blocks)]
        bits = self.evaluate(points).reshape(len(indices), blocks * self.shape.bits)
        return (2 * bits[:, :dimension].astype(np.int8) - 1).astype(np.int8)

    def column_sums(self, indices: Sequence[int], counts: Sequence[int]) -> list[int]:
        """S_i = Σ_x c_x·A[i, x] for the labels with these indices and counts (exact)."""
        total = np.zeros(self.shape.dimension, dtype=np.int64)
        step = max(1, BLOCK_ENTRIES // self.shape.dimension)
        for start in range(0, len(indices), step):
            chunk = self.columns(indices[start : start + step])
            weights = np.asarray(counts[start : start + step], dtype=np.int64)
            total += weights @ chunk.astype(np.int64)
        return [int(v) for v in total]


@dataclass(frozen=True)
class SparseProjection(QueryAnswers):
    """A released random projection (see the module docstring): the hash, the noisy column
    sums Y, and the declaration of the mechanism that released them."""

    declaration: Declaration
    hash: ProjectionHash
    sums: tuple[int, ...]
    _columns: dict[int, npt.NDArray[np.int8]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    interactive = False

    def __post_init__(self) -> None:
        if len(self.sums) != self.hash.shape.dimension:
            raise ValueError(
                f"{len(self.sums)} sums for a projection of dimension T = "
                f"{self.hash.shape.dimension}"
            )

    @cached_property
    def _released(self) -> npt.NDArray[Any]:
        """Y as int64 when every Σ_i ±Y_i fits, as exact Python ints otherwise."""
        biggest = max((abs(v) for v in self.sums), default=0)
        fits = biggest * len(self.sums) < 1 << 62
        return np.asarray(self.sums, dtype=np.int64 if fits else object)

    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        """Σ_i P_i·Y_i/(n·T·W) for each query, clamped to [0, 1]; the columns of all the labels
        involved are evaluated together (and kept for later queries)."""
        parsed = [self.query(q) for q in queries]
        universe = self.declaration.universe
        assert universe is not None
        indices = [universe.index(x) for q in parsed for x in q.labels]
        missing = sorted({j for j in indices if j not in self._columns})
        for j, column in zip(missing, self.hash.columns(missing), strict=True):
            self._columns[j] = column
        unit = self.hash.shape.dimension * self.scale
        out = []
        for query in parsed:
            total = 0
            for x, w in zip(query.labels, query.weights, strict=True):
                total += w * int(self._columns[universe.index(x)] @ self._released)
            out.append(Fraction(clamp(total, unit), unit))
        return out

    def to_bytes(self) -> bytes:
        """A JSON header line (the mechanism's name and parameters, the shape, the width of a
        sum), then the r coefficients (⌈s/8⌉ bytes each) and the T sums (two's complement), all
        little-endian."""
        shape = self.hash.shape
        width = max(1, max((v.bit_length() for v in self.sums), default=0) // 8 + 1)
        header = {
            "format": FORMAT,
            "mechanism": self.declaration.name,
            "params": params_text(self.declaration.params),
            "dimension": shape.dimension,
            "rank": shape.rank,
            "exponent": shape.exponent,
            "sum_bytes": width,
        }
        size = (shape.bits + 7) // 8
        body = b"".join(c.to_bytes(size, "little") for c in self.hash.coefficients)
        body += b"".join(v.to_bytes(width, "little", signed=True) for v in self.sums)
        return json.dumps(header, sort_keys=True).encode() + b"\n" + body

    @classmethod
    def from_bytes(cls, data: bytes, registry: Registry | None = None) -> SparseProjection:
        """The projection :meth:`to_bytes` wrote. The bytes are untrusted
        (:mod:`dpplug.untrusted`): the mechanism is rebuilt from its name and parameters through
        *registry* (the default registry when ``None``), its guarantee and accuracy are
        recomputed, and the shape, every coefficient and every sum are checked against it;
        anything else raises :class:`BadData` (an uninstalled mechanism
        :class:`~dpplug.errors.UnknownMechanism`)."""
        from dpplug.kinds import QUERY_RELEASER

        with reading("a sparse projection"):
            header, body = header_and_body(data)
            fields(header, _HEADER_TYPES, FORMAT)
            name = header["mechanism"]
            mechanism = rebuild(name, header["params"], QUERY_RELEASER, registry)
            shape = getattr(mechanism, "projection", None)
            if not isinstance(shape, ProjectionShape):
                raise ValueError(f"{name!r} does not release sparse projections")
            given = (header["dimension"], header["rank"], header["exponent"])
            if given != (shape.dimension, shape.rank, shape.exponent):
                raise ValueError(f"shape {given} is not the mechanism's {shape}")
            width = header["sum_bytes"]
            if not 1 <= width <= 64:
                raise ValueError(f"sum_bytes {width!r} out of range")
            size = (shape.bits + 7) // 8
            if len(body) != shape.rank * size + shape.dimension * width:
                raise ValueError(f"expected {shape.rank * size + shape.dimension * width} bytes")
            split = shape.rank * size
            coefficients = tuple(
                int.from_bytes(body[i : i + size], "little") for i in range(0, split, size)
            )
            if any(c >> shape.bits for c in coefficients):
                raise ValueError(f"a coefficient has more than s = {shape.bits} bits")
            sums = tuple(
                int.from_bytes(body[i : i + width], "little", signed=True)
                for i in range(split, len(body), width)
            )
            declaration = cast("QueryReleaser", mechanism).declaration()
        return cls(declaration, ProjectionHash(shape, coefficients), sums)
