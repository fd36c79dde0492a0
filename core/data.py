"""Validation of the data handed to mechanisms: counts as integers within declared bounds.

Runs before any randomness is drawn; failures raise :class:`dpplug.errors.BadData` saying what to
change.
"""

from __future__ import annotations

import numbers

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadData


def integer_scalar(value: object, low: int, high: int, what: str) -> int:
    """*value* as an ``int`` in [low, high], or :class:`BadData`."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise BadData(
            f"{what} must be an integer in [{low}, {high}], got {value!r} "
            f"({type(value).__name__}); pass an int (round or cast non-integer values first)"
        )
    number = int(value)
    if not low <= number <= high:
        raise BadData(f"{what} must be in [{low}, {high}], got {number}; clip or filter it first")
    return number


def integer_array(values: object, low: int, high: int, what: str) -> npt.NDArray[np.int64]:
    """*values* as an int64 array with every entry in [low, high], or :class:`BadData`. A
    masked array is refused: its mask would be ignored, releasing the masked counts."""
    if isinstance(values, np.ma.MaskedArray):
        raise BadData(
            f"{what} must be a plain array of integers, got a masked array (its mask would be "
            "ignored); pass values.compressed() or values.filled(0) as you mean it"
        )
    try:
        array = np.asarray(values)
    except ValueError as exc:  # ragged nesting
        raise BadData(f"{what} must be a rectangular array of integers ({exc})") from None
    if array.size == 0 and array.dtype.kind == "f":  # [] becomes float64: no value to reject
        array = array.astype(np.int64)
    if array.dtype == object or array.dtype.kind not in "iu":
        raise BadData(
            f"{what} must be an array of integers, got dtype {array.dtype}; "
            f"cast with .astype(np.int64) after rounding, or pass a list of ints"
        )
    if array.size:
        lo, hi = int(array.min()), int(array.max())
        if lo < low or hi > high:
            bad = lo if lo < low else hi
            raise BadData(
                f"{what} must be in [{low}, {high}], got {bad}; clip or filter the counts first"
            )
    return array.astype(np.int64, copy=False)
