"""Universes: the public, finite label sets X that histograms are released over.

Balcer & Vadhan (full version §2) release histograms over a data universe X whose size |X| is
public, with a bijection between labels and the indices 0 … |X|−1 that does not depend on the
data. Index order is the *canonical order*: every released collection is sorted by it, never by
anything the data decides (full version §2.2.1).

- :class:`IntegerRange`: the integers low … high.
- :class:`Labels`: a finite enumerated set, in the order it was declared.
- :class:`ByteStrings`: byte strings of at most ``max_length`` bytes, in shortlex order
  (shorter first, then big-endian), so |X| = Σ_{k ≤ L} 256^k, e.g. about 2^64 for L = 8.
- :class:`TextStrings`: strings of at most ``max_length`` Unicode scalar values (code points
  except surrogates), in shortlex order over the 1,112,064 scalar values.

Every universe holds at most 2^1024 labels (:data:`MAX_UNIVERSE_BITS`): ``bytes:127`` and
``text:50`` are the largest string universes.

Every universe has a :attr:`~Universe.spec` string that :func:`parse_universe` turns back into
an equal universe, so mechanisms built from it can be serialised and rebuilt.
"""

from __future__ import annotations

import functools
import json
import numbers
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadData, BadParameter

#: Indices below this fit a machine word (``uint64``).
WORD = 1 << 64
#: Indices computed in bulk: Python ints, or a numpy integer array when every one fits a word.
BulkIndices = list[int] | npt.NDArray[np.integer[Any]]

_SURROGATES = range(0xD800, 0xE000)
_SCALARS = 0x110000 - len(_SURROGATES)


class Universe(ABC):
    """A finite label set with a public size and a data-independent label ↔ index bijection."""

    #: |X|, public.
    size: int

    @property
    @abstractmethod
    def spec(self) -> str:
        """Text that :func:`parse_universe` turns back into this universe."""

    @abstractmethod
    def _index(self, label: Any) -> int | None:
        """The index of *label*, or ``None`` if it is not in the universe."""

    @abstractmethod
    def label(self, index: int) -> Any:
        """The label with index *index* ∈ [0, |X|)."""

    def index(self, label: object) -> int:
        """The index of *label* in canonical order; :class:`BadData` if it is not in X."""
        try:
            found = self._index(label)
        except (TypeError, ValueError):
            found = None
        if found is None:
            raise BadData(
                f"label {label!r} is not in the universe {self.spec}; filter the data to the "
                f"declared universe or declare a larger one"
            )
        return found

    def indices(self, labels: Sequence[object]) -> BulkIndices | None:
        """The indices of *labels*, computed in bulk (numpy, or one C-level pass; a numpy array
        when every index fits a machine word), or ``None`` if one of them is not a label of the
        expected type in X: then :meth:`index` on each finds the first bad one and says what is
        wrong with it. Subclasses override :meth:`_bulk`; the base class indexes one label at a
        time."""
        try:
            return self._bulk(labels)
        except (TypeError, ValueError, OverflowError, UnicodeError):
            return None

    def _bulk(self, labels: Sequence[object]) -> BulkIndices | None:
        found = [self._index(label) for label in labels]
        return None if None in found else found  # type: ignore[return-value]

    def __contains__(self, label: object) -> bool:
        try:
            return self._index(label) is not None
        except (TypeError, ValueError):
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Universe) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        return f"parse_universe({self.spec!r})"

    def __str__(self) -> str:
        return self.spec


#: The exact types of integers checked in bulk (bool and numpy.bool_ are not integers).
INTEGER_TYPES = {int, *(np.dtype(code).type for code in "bhilqpBHILQP")}
_INT64_LOW, _INT64_HIGH = -(1 << 63), (1 << 63) - 1
#: Fewer labels than this are indexed in Python (numpy's per-call cost dominates there).
_FEW = 64


def _is_integer(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


class IntegerRange(Universe):
    """The integers low, low+1, …, high (index = label − low)."""

    def __init__(self, low: int, high: int) -> None:
        if not all(_is_integer(v) for v in (low, high)):
            raise BadParameter(f"IntegerRange needs integer bounds, got {low!r}, {high!r}")
        if high < low:
            raise BadParameter(f"IntegerRange needs low ≤ high, got {low} > {high}")
        if max(abs(int(low)), abs(int(high))) > MAX_UNIVERSE_SIZE:
            raise BadParameter(
                f"range bounds must be within ±2^{MAX_UNIVERSE_BITS}; universes hold at most "
                f"2^{MAX_UNIVERSE_BITS} labels"
            )
        self.low, self.high = int(low), int(high)
        self.size = self.high - self.low + 1

    @property
    def spec(self) -> str:
        return f"range:{self.low}:{self.high}"

    def _index(self, label: Any) -> int | None:
        if not _is_integer(label):
            return None
        value = int(label)
        return value - self.low if self.low <= value <= self.high else None

    def label(self, index: int) -> int:
        return self.low + index

    def _bulk(self, labels: Sequence[object]) -> BulkIndices | None:
        if not set(map(type, labels)) <= INTEGER_TYPES:
            return None
        if len(labels) > _FEW and _INT64_LOW <= self.low and self.high <= _INT64_HIGH:
            values = np.fromiter(labels, dtype=np.int64, count=len(labels))  # OverflowError: None
            if values.size and (values.min() < self.low or values.max() > self.high):
                return None
            # The differences fit a uint64 (high − low < 2^64), whatever int64 makes of them.
            return values.view(np.uint64) - np.uint64(self.low % WORD)
        low, high = self.low, self.high
        found = [int(value) - low for value in labels]  # type: ignore[call-overload]
        return found if all(0 <= index <= high - low for index in found) else None


class Labels(Universe):
    """A finite enumerated set of hashable labels; canonical order is the declared order."""

    def __init__(self, labels: Iterable[Hashable]) -> None:
        self.labels: tuple[Hashable, ...] = tuple(labels)
        self._positions: dict[Hashable, int] = {}
        for position, label in enumerate(self.labels):
            if not isinstance(label, str | int) or isinstance(label, bool):
                raise BadParameter(f"enumerated labels must be str or int, got {label!r}")
            if label in self._positions:
                raise BadParameter(f"label {label!r} is declared twice; declare each label once")
            self._positions[label] = position
        if not self.labels:
            raise BadParameter("an enumerated universe needs at least one label")
        self.size = len(self.labels)

    @property
    def spec(self) -> str:
        return "labels:" + json.dumps(list(self.labels), ensure_ascii=False)

    def _index(self, label: Any) -> int | None:
        # Only str and integer labels: 1.0 or Fraction(1) would otherwise hash-match label 1.
        if isinstance(label, bool | np.bool_) or not isinstance(label, str | numbers.Integral):
            return None
        return self._positions.get(label if isinstance(label, str) else int(label))

    def label(self, index: int) -> Hashable:
        return self.labels[index]

    def _bulk(self, labels: Sequence[object]) -> BulkIndices | None:
        if not set(map(type, labels)) <= {str, int}:  # exact types: no bool, no float
            return None
        found = list(map(self._positions.get, labels))
        return None if None in found else found  # type: ignore[return-value]


#: Every universe holds at most 2^MAX_UNIVERSE_BITS labels, so that sizes, indices and the
#: arithmetic mechanisms do on them (fields of size ≥ |X|, |X|^n bounds) stay bounded.
MAX_UNIVERSE_BITS = 1024
MAX_UNIVERSE_SIZE = 1 << MAX_UNIVERSE_BITS


def _shortlex_size(base: int, max_length: int) -> int:
    """Σ_{k ≤ max_length} base^k, the number of words of length ≤ max_length (closed form)."""
    return int((base ** (max_length + 1) - 1) // (base - 1))


@functools.cache
def _longest(base: int) -> int:
    """The largest max_length whose shortlex universe fits in MAX_UNIVERSE_SIZE."""
    length = MAX_UNIVERSE_BITS // (base.bit_length() - 1)
    while _shortlex_size(base, length) > MAX_UNIVERSE_SIZE:
        length -= 1
    return length


def _check_length(kind: str, max_length: object, base: int) -> int:
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0:
        raise BadParameter(f"{kind}:L needs an integer L ≥ 0, got {max_length!r}")
    if max_length > _longest(base):
        raise BadParameter(
            f"{kind}:{max_length} has more than 2^{MAX_UNIVERSE_BITS} labels; universes hold at "
            f"most 2^{MAX_UNIVERSE_BITS} (up to {kind}:{_longest(base)}): declare a shorter "
            f"maximum length"
        )
    return max_length


@functools.cache
def _shortlex_offsets(base: int, max_length: int) -> tuple[int, ...]:
    """The index of the first word of each length 0 … max_length in shortlex order."""
    return tuple(_shortlex_size(base, length - 1) for length in range(max_length + 1))


def _shortlex_index(digits: Sequence[int], base: int) -> int:
    """Index of a word among all words over [0, base) in shortlex order."""
    value = 0
    for digit in digits:
        value = value * base + digit
    return _shortlex_size(base, len(digits) - 1) + value if digits else 0


def _shortlex_word(index: int, base: int) -> list[int]:
    length, below = 0, 0
    while index >= below + base**length:
        below += base**length
        length += 1
    value = index - below
    digits = [0] * length
    for position in range(length - 1, -1, -1):
        value, digits[position] = divmod(value, base)
    return digits


class ByteStrings(Universe):
    """Byte strings of length ≤ ``max_length``, in shortlex order."""

    def __init__(self, max_length: int) -> None:
        self.max_length = _check_length("bytes", max_length, 256)
        self.size = _shortlex_size(256, max_length)

    @property
    def spec(self) -> str:
        return f"bytes:{self.max_length}"

    def _index(self, label: Any) -> int | None:
        if not isinstance(label, bytes) or len(label) > self.max_length:
            return None
        return _shortlex_index(label, 256)

    def label(self, index: int) -> bytes:
        return bytes(_shortlex_word(index, 256))

    def _bulk(self, labels: Sequence[object]) -> BulkIndices | None:
        if set(map(type, labels)) - {bytes}:
            return None
        words: Sequence[bytes] = labels  # type: ignore[assignment]
        longest = max(map(len, words), default=0)
        if longest > self.max_length:
            return None
        below = _shortlex_offsets(256, self.max_length)
        if len(words) > _FEW and longest <= 8:
            found = _short_word_indices(words, below)
            if found is not None:
                return found
        return [below[len(word)] + int.from_bytes(word, "big") for word in words]


def _short_word_indices(
    words: Sequence[bytes], below: tuple[int, ...]
) -> npt.NDArray[np.uint64] | None:
    """The shortlex indices of byte strings of at most 8 bytes, in numpy: each word's value
    (big-endian, its bytes placed at the right of a zeroed 8-byte row) plus the index of the
    first word of its length; ``None`` if an index reaches 2^64 (then Python computes them)."""
    lengths = np.fromiter(map(len, words), dtype=np.intp, count=len(words))
    joined = np.frombuffer(b"".join(words), dtype=np.uint8)
    rows = np.zeros((len(words), 8), dtype=np.uint8)
    starts = np.cumsum(lengths) - lengths
    for length in np.flatnonzero(np.bincount(lengths)[1:]).tolist():
        length += 1
        these = np.flatnonzero(lengths == length)
        if these.size == len(words):
            rows[:, 8 - length :] = joined.reshape(-1, length)
        else:
            rows[these, 8 - length :] = joined[starts[these, None] + np.arange(length)]
    values = rows.view(">u8").ravel().astype(np.uint64)
    offsets = np.array(below[:9], dtype=np.uint64)[lengths]
    found = values + offsets
    if np.any(found < values):  # wrapped past 2^64
        return None
    return found


class TextStrings(Universe):
    """Strings of at most ``max_length`` Unicode scalar values, in shortlex order of their code
    points (surrogates, which cannot be encoded, are not labels)."""

    def __init__(self, max_length: int) -> None:
        self.max_length = _check_length("text", max_length, _SCALARS)
        self.size = _shortlex_size(_SCALARS, max_length)

    @property
    def spec(self) -> str:
        return f"text:{self.max_length}"

    def _index(self, label: Any) -> int | None:
        if not isinstance(label, str) or len(label) > self.max_length:
            return None
        digits = []
        for char in label:
            point = ord(char)
            if point in _SURROGATES:
                return None
            digits.append(point - len(_SURROGATES) if point > _SURROGATES[-1] else point)
        return _shortlex_index(digits, _SCALARS)

    def _bulk(self, labels: Sequence[object]) -> BulkIndices | None:
        if set(map(type, labels)) - {str}:
            return None
        words: Sequence[str] = labels  # type: ignore[assignment]
        if max(map(len, words), default=0) > self.max_length:
            return None
        below = _shortlex_offsets(_SCALARS, self.max_length)
        # UTF-32 refuses surrogates (UnicodeError: None); each word's code points, then digits.
        points = np.frombuffer("".join(words).encode("utf-32-be"), dtype=">u4").astype(np.int64)
        digits = (points - len(_SURROGATES) * (points > _SURROGATES[-1])).tolist()
        found, start = [], 0
        for word in words:
            value = 0
            for digit in digits[start : start + len(word)]:
                value = value * _SCALARS + digit
            found.append(below[len(word)] + value)
            start += len(word)
        return found

    def label(self, index: int) -> str:
        digits = _shortlex_word(index, _SCALARS)
        return "".join(chr(d + len(_SURROGATES) if d >= _SURROGATES[0] else d) for d in digits)


def parse_universe(spec: object) -> Universe:
    """A universe from a :class:`Universe` or its spec text: ``range:LOW:HIGH``, ``bytes:L``,
    ``text:L`` or ``labels:["a", "b", …]`` (JSON list)."""
    if isinstance(spec, Universe):
        return spec
    if not isinstance(spec, str):
        raise BadParameter(
            f"universe must be a dpplug Universe or its spec text, got {type(spec).__name__}; "
            f'e.g. universe="range:0:999", "bytes:8", "text:16" or \'labels:["a", "b"]\''
        )
    kind, _, rest = spec.partition(":")
    try:
        if kind == "range":
            low, high = rest.split(":")
            return IntegerRange(int(low), int(high))
        if kind in ("bytes", "text"):
            length = int(rest)
            return ByteStrings(length) if kind == "bytes" else TextStrings(length)
        if kind == "labels":
            labels = json.loads(rest)
            if isinstance(labels, list):
                return Labels(labels)
    except BadParameter:
        raise  # a readable spec with a bad value: keep the message that names it
    except (ValueError, json.JSONDecodeError, RecursionError):  # nesting too deep to read
        pass
    raise BadParameter(
        f"cannot read the universe {spec!r}; write range:LOW:HIGH, bytes:MAX_LENGTH, "
        f'text:MAX_LENGTH or labels:["a", "b", …]'
    )
