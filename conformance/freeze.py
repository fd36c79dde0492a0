"""What a plugin could patch to change its own verdict, frozen before it loads and compared
after it loaded and again after its contracts ran (:mod:`.isolation`).

A worker checks a plugin with the suite in one process, so the plugin can reach the suite's
code. What the suite's verdict depends on, and a plugin could replace, is recorded by identity
(:class:`Frozen`) once the suite, the built-in mechanisms and every library they use are
imported, and before the plugin is:

- every module then loaded (the suite, numpy, scipy, gmpy2, hypothesis, the standard library,
  ``builtins``) stays in ``sys.modules`` under its name;
- every function, class, module and other callable bound at module level in those modules
  (``numpy.array_equal``, ``builtins.sum``, ``dpplug.conformance.runner.run_contract``), and every
  method, property and other callable member of the classes they define;
- of each Python function among them, its code object, defaults and the callables in its
  closure; of a wrapper (numpy's dispatchers, ``functools.wraps``), the function it wraps;
- in dpplug's own modules, also the callables held in module-level and class-level tables
  (dicts, lists, tuples, sets) and in dpplug's objects they hold, to a depth of
  :data:`_DEPTH` (the contracts' table, the kinds and their surfaces);
- the import machinery (``sys.meta_path``, ``sys.path_hooks``) and the trace and profile
  functions.

A module imported later, a new name, or data (numbers, caches) changing is not a change: code
does that by itself. What this cannot see is a patch made and undone between two comparisons
(while one contract runs), or a plugin reading the worker's memory to forge its report;
``docs/trust.md`` says what follows from that.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable

#: How deep dpplug's tables are followed.
_DEPTH = 4
#: Larger tables are not followed (the suite's tables of callables are small).
_LARGEST_TABLE = 10_000
_MEMBERS = (property, classmethod, staticmethod, types.ModuleType)


def _watched(value: object) -> bool:
    """Whether *value* is code a patch would replace: a callable, a module or a descriptor."""
    return callable(value) or isinstance(value, _MEMBERS)


def _own(module_name: str) -> bool:
    return module_name == "dpplug" or module_name.startswith("dpplug.")


class Frozen:
    """The identities listed in the module docstring, taken when made; :meth:`changes` names
    those that differ now."""

    def __init__(self) -> None:
        self.recorded = _capture()

    def changes(self) -> list[str]:
        """What was replaced or removed since this was made, sorted, each named once: by the
        shortest of the names it was reached by (``numpy.array_equal``, not the same function
        under ``numpy._core.numeric``), and not again through what it is made of (its code)."""
        now = _capture()
        changed = [
            key for key, value in self.recorded.items() if key not in now or now[key] is not value
        ]
        names: dict[int, str] = {}
        for key in changed:
            known = names.get(id(self.recorded[key]))
            if known is None or (len(key), key) < (len(known), known):
                names[id(self.recorded[key])] = key
        kept: list[str] = []
        for key in sorted(names.values()):
            if not any(key.startswith((k + ".", k + "[")) for k in kept):
                kept.append(key)
        return kept


def _capture() -> dict[str, object]:
    seen: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if module is None:
            continue
        seen[f"sys.modules[{name!r}]"] = module
        own = _own(name)
        for attribute, value in list(vars(module).items()):
            key = f"{name}.{attribute}"
            if _watched(value):
                _record(seen, key, value)
            elif own:
                _table(seen, key, value, _DEPTH, set())
            if isinstance(value, type) and value.__module__ == name:
                _members(seen, key, value, own)
    for hook, found in (("sys.meta_path", sys.meta_path), ("sys.path_hooks", sys.path_hooks)):
        for i, item in enumerate(found):
            seen[f"{hook}[{i}]"] = item
    seen["sys.gettrace()"] = sys.gettrace()
    seen["sys.getprofile()"] = sys.getprofile()
    return seen


def _members(seen: dict[str, object], key: str, cls: type, own: bool) -> None:
    for member, value in list(vars(cls).items()):
        if _watched(value):
            _record(seen, f"{key}.{member}", value)
        elif own:
            _table(seen, f"{key}.{member}", value, _DEPTH, set())


def _record(seen: dict[str, object], key: str, value: object, depth: int = 2) -> None:
    """*value* under *key*, and what it is made of: a function's code, defaults and closure,
    a descriptor's functions, a wrapper's wrapped function (*depth* levels down)."""
    seen[key] = value
    if depth == 0:
        return
    parts: list[tuple[str, object]] = []
    if isinstance(value, types.FunctionType):
        parts += [
            ("__code__", value.__code__),
            ("__defaults__", value.__defaults__),
            ("__kwdefaults__", value.__kwdefaults__),
        ]
        for i, cell in enumerate(value.__closure__ or ()):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if _watched(contents):
                parts.append((f"<closure {i}>", contents))
    elif isinstance(value, classmethod | staticmethod):
        parts.append(("__func__", value.__func__))
    elif isinstance(value, property):
        parts += [("fget", value.fget), ("fset", value.fset), ("fdel", value.fdel)]
    for attribute in ("__wrapped__", "_implementation"):
        try:
            wrapped = getattr(value, attribute, None)
        except Exception:  # an object whose attribute lookup fails is left as it is
            wrapped = None
        if wrapped is not None and _watched(wrapped) and not isinstance(value, type):
            parts.append((attribute, wrapped))
    for name, part in parts:
        if part is None or _watched(part) or isinstance(part, types.CodeType | tuple | dict):
            _record(seen, f"{key}.{name}", part, depth - 1)


def _table(seen: dict[str, object], key: str, value: object, depth: int, on_path: set[int]) -> None:
    """The callables inside one of dpplug's tables or objects, followed *depth* levels."""
    if depth == 0 or id(value) in on_path:
        return
    items: Iterable[tuple[str, object]]
    if isinstance(value, dict):
        if len(value) > _LARGEST_TABLE:
            return
        items = ((repr(k), v) for k, v in list(value.items()))
    elif isinstance(value, list | tuple):
        if len(value) > _LARGEST_TABLE:
            return
        items = ((str(i), v) for i, v in enumerate(list(value)))
    elif isinstance(value, set | frozenset):
        if len(value) > _LARGEST_TABLE:
            return
        items = ((repr(v), v) for v in list(value) if _watched(v))
    elif _own(type(value).__module__) and hasattr(value, "__dict__"):
        items = list(vars(value).items())
    else:
        return
    on_path = on_path | {id(value)}
    for name, item in items:
        sub = f"{key}[{name}]"
        if _watched(item):
            _record(seen, sub, item)
        else:
            _table(seen, sub, item, depth - 1, on_path)


def describe(changed: list[str], limit: int = 5) -> str:
    """The first *limit* of *changed*, and how many more."""
    shown = ", ".join(changed[:limit])
    return shown + (f" and {len(changed) - limit} more" if len(changed) > limit else "")
