"""Reading dpplug's outputs back from untrusted bytes: the one reader every ``from_bytes`` uses.

A compact histogram, an anonymized histogram and a sparse projection cross process and machine
boundaries as bytes (``to_bytes``), and are read back from bytes that may come from anywhere.
Each format is JSON: a header line followed by a binary body, or a single JSON document. Reading
one goes the same way every time, and this module holds that way once:

1. :func:`reading` around the whole read: every way parsing can fail (malformed JSON, JSON
   nested deeper than the interpreter recurses, a wrong type, a number out of range, a refused
   parameter) becomes :class:`~dpplug.errors.BadData` saying what could not be read and why; an
   uninstalled mechanism stays :class:`~dpplug.errors.UnknownMechanism`, which says what to
   install.
2. :func:`header_and_body` or :func:`document`: the JSON object, bounded in size before it is
   parsed, and :func:`fields`: exactly the expected fields, each of its JSON type, the format
   string first.
3. :func:`rebuild`: the mechanism the bytes name, rebuilt through a registry from parameters
   given as strings, integers or booleans, refused unless it is of the expected kind. Its
   guarantee and accuracy are recomputed from it, never taken from the bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dpplug.errors import BadData, DpplugError, UnknownMechanism
from dpplug.param_text import params_from_text

if TYPE_CHECKING:
    from dpplug.kind import Kind
    from dpplug.mechanism import Mechanism
    from dpplug.plugin_registry import Registry

#: The longest header line read (bytes), before it is parsed.
MAX_HEADER_BYTES = 1 << 16
#: What reading malformed bytes may raise (json, int(), mpq(), a refused parameter, JSON nested
#: too deep, a missing key), all turned into BadData by :func:`reading`.
_UNREADABLE = (
    DpplugError,
    ValueError,
    TypeError,
    ArithmeticError,
    LookupError,
    RecursionError,
    AttributeError,
)


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Read *what* (``"a compact histogram"``) from untrusted bytes inside the block: BadData
    and UnknownMechanism pass as they are; anything else reading may raise becomes
    ``BadData("cannot read {what} from these bytes: …")``."""
    try:
        yield
    except (BadData, UnknownMechanism):
        raise
    except _UNREADABLE as exc:
        raise BadData(f"cannot read {what} from these bytes: {exc}") from None


def as_bytes(data: object) -> bytes:
    """*data* as bytes, from bytes, a bytearray or a memoryview (TypeError otherwise)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(data).__name__}")
    return bytes(data)


def header_and_body(data: object) -> tuple[dict[str, Any], bytes]:
    """The JSON object on the first line of *data* (at most :data:`MAX_HEADER_BYTES`) and the
    bytes after it."""
    head, newline, body = as_bytes(data).partition(b"\n")
    if not newline or len(head) > MAX_HEADER_BYTES:
        raise ValueError(f"no header line of at most {MAX_HEADER_BYTES} bytes")
    return _object(head), body


def document(data: object, most: int) -> dict[str, Any]:
    """*data* as one JSON object of at most *most* bytes."""
    raw = as_bytes(data)
    if len(raw) > most:
        raise ValueError(f"more than {most} bytes")
    return _object(raw)


def _object(raw: bytes) -> dict[str, Any]:
    found = json.loads(raw.decode("utf-8"))
    if not isinstance(found, dict):
        raise ValueError("not a JSON object")
    return found


def fields(found: Mapping[str, Any], types: Mapping[str, type], format_: str) -> None:
    """*found* has exactly the fields of *types*, each of exactly its JSON type (an integer is
    not a boolean), and its ``format`` is *format_*."""
    if found.get("format") != format_:
        raise ValueError(f"not {format_!r}")
    if set(found) != set(types):
        raise ValueError(f"the fields must be exactly {sorted(types)}")
    for key, kind in types.items():
        if type(found[key]) is not kind:
            raise ValueError(f"{key} must be a JSON {kind.__name__}")


def rebuild(name: object, params: object, kind: Kind, registry: Registry | None) -> Mechanism:
    """The mechanism named *name*, rebuilt through *registry* (the default registry when
    ``None``) from *params* (strings, integers or booleans, read by
    :func:`~dpplug.param_text.params_from_text`), refused unless it is of *kind*."""
    from dpplug.plugin_registry import resolve_registry

    if not isinstance(name, str) or not isinstance(params, Mapping):
        raise ValueError("the mechanism must be a name and its parameters an object")
    if not all(type(v) in (str, int, bool) for v in params.values()):
        raise ValueError("parameters must be strings, integers or booleans")
    entry = resolve_registry(registry).get(name)
    if entry.kind is not kind:
        raise ValueError(f"{name!r} is a {entry.kind.name}, not a {kind.name}")
    return entry.create(**params_from_text(params))
