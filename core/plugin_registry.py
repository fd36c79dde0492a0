"""The registry: the one place that knows which plugins exist (pluggy, entry points ``dpplug``).

Built-in mechanisms are loaded first, one family at a time (:data:`BUILT_IN_FAMILIES`,
each family its own default plugin), through the same hooks a third party uses; then every entry
point in the group ``dpplug``. A plugin (a built-in family included) that fails to import, to
validate against the hookspecs, or to register is quarantined with its error and listed as
broken; the others keep working. A name already taken by a built-in quarantines the later
plugin, so a third party cannot shadow a built-in; two third parties claiming one name are both
quarantined, each error naming both, since which installed first is an accident. The hooks are the
kinds' (:data:`dpplug.kinds.KINDS`).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from dpplug.errors import (
    BadParameter,
    DpplugError,
    DuplicateMechanismName,
    PluginFault,
    UnknownMechanism,
)
from dpplug.kind import Kind
from dpplug.kinds import KINDS
from dpplug.mechanism import Mechanism
from dpplug.params import Schema

ENTRY_POINT_GROUP = "dpplug"
#: The built-in families (packages under ``dpplug.plugins``), in the order the registry loads
#: them: named, not imported, so core imports nothing of the plugins until it loads them.
BUILT_IN_FAMILIES = (
    "dpplug.plugins.samplers",
    "dpplug.plugins.partition",
    "dpplug.plugins.histograms",
    "dpplug.plugins.anonymized",
    "dpplug.plugins.queries",
    "dpplug.plugins.set_union",
)

#: What a mechanism name looks like: lower-case words joined by dashes.
NAME_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True)
class Source:
    """Where a plugin comes from: its plugin name, distribution and version."""

    plugin: str
    distribution: str
    version: str

    def describe(self) -> str:
        return f"{self.distribution} {self.version} ({self.plugin})".replace("  ", " ")


@dataclass(frozen=True)
class Entry:
    """One registered mechanism."""

    name: str
    kind: Kind
    cls: type[Mechanism]
    source: Source
    #: The registry this entry belongs to; mechanisms it creates resolve other mechanisms in it.
    registry: Registry | None = field(default=None, repr=False, compare=False)

    @property
    def module(self) -> str:
        """The module that defines the mechanism, e.g. ``dpplug.plugins.samplers.geosample``."""
        return self.cls.__module__

    def create(self, **params: object) -> Mechanism:
        """A new instance; parameters are validated before the mechanism exists."""
        if "registry" in params:
            raise BadParameter(
                f"{self.name} is created from the registry it was looked up in; to use another "
                f"registry, call that registry's create({self.name!r}, …)"
            )
        try:
            return self.cls(registry=self.registry, **params)
        except DpplugError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plugin bug (SystemExit included), not the caller's
            raise PluginFault(
                f"plugin {self.source.describe()} raised {type(exc).__name__}: {exc} while "
                f"creating {self.name!r}; report it to the plugin's authors"
            ) from exc


@dataclass(frozen=True)
class BrokenPlugin:
    """A quarantined plugin, the error that put it there, and the names it had tried to claim."""

    source: Source
    error: str
    names: tuple[str, ...] = ()


@dataclass(eq=False)
class Registry:
    """Registered mechanisms by name, plus quarantined plugins. Registries compare and hash by
    identity: two registries are the same only if they are one object."""

    _entries: dict[str, Entry] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)

    @classmethod
    def load(
        cls,
        plugins: Iterable[object] = (),
        entry_points: bool | Callable[[metadata.EntryPoint], bool] = True,
    ) -> Registry:
        """Built-in plugins, then *plugins* (objects with hookimpls), then the entry points of
        the group ``dpplug`` (all of them, none, or those *entry_points* selects)."""
        registry = cls()
        manager = pluggy.PluginManager("dpplug")
        manager.add_hookspecs(type("KindHooks", (), {kind.hook: kind.hookspec for kind in KINDS}))
        version = _version("dpplug")
        for family in BUILT_IN_FAMILIES:
            load = functools.partial(importlib.import_module, family)
            registry._add(manager, Source(family, "dpplug", version), load)
        for plugin in plugins:
            name = getattr(plugin, "__name__", type(plugin).__name__)
            registry._add(manager, Source(name, "(runtime)", ""), functools.partial(_same, plugin))
        if entry_points:
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                if callable(entry_points) and not entry_points(ep):
                    continue
                dist = ep.dist
                source = Source(
                    ep.name,
                    dist.name if dist else "(unknown)",
                    dist.version if dist else "",
                )
                registry._add(manager, source, ep.load)
        return registry

    def _add(
        self, manager: pluggy.PluginManager, source: Source, load: Callable[[], object]
    ) -> None:
        staged: list[Entry] = []
        try:
            plugin = load()
            manager.register(plugin, name=source.plugin)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # whatever a plugin raises at import, SystemExit included
            self.broken.append(BrokenPlugin(source, f"{type(exc).__name__}: {exc}"))
            return
        try:
            manager.check_pending()
            for kind in KINDS:
                for impl in getattr(manager.hook, kind.hook).get_hookimpls():
                    if impl.plugin is plugin:
                        impl.function(register=self._stager(kind, source, staged))
            for entry in staged:
                if entry.name in self._entries:
                    self._clash(entry.name, source)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            manager.unregister(plugin)
            names = tuple(e.name for e in staged)
            self.broken.append(BrokenPlugin(source, f"{type(exc).__name__}: {exc}", names))
            return
        for entry in staged:
            self._entries[entry.name] = entry

    def _clash(self, name: str, later: Source) -> None:
        """*later* registers a name already taken. A built-in keeps its name and only *later* is
        quarantined; between third parties, which came first is an accident of installation,
        so both are quarantined, each error naming both."""
        first = self._entries[name].source
        message = (
            f"mechanism name {name!r} is registered by both {first.describe()} and "
            f"{later.describe()}; "
        )
        if first.distribution == "dpplug":
            raise DuplicateMechanismName(message + "built-in names cannot be taken: rename it")
        message += "neither gets it: rename one of them (or uninstall one)"
        taken = tuple(n for n, e in self._entries.items() if e.source == first)
        for taken_name in taken:
            del self._entries[taken_name]
        self.broken.append(BrokenPlugin(first, f"DuplicateMechanismName: {message}", taken))
        raise DuplicateMechanismName(message)

    def _stager(
        self, kind: Kind, source: Source, staged: list[Entry]
    ) -> Callable[[type[Any]], None]:
        def register(cls: type[Any]) -> None:
            _check_mechanism_class(cls, kind)
            if any(e.name == cls.name for e in staged):
                raise DuplicateMechanismName(
                    f"{source.describe()} registers {cls.name!r} twice; register each name once"
                )
            staged.append(Entry(cls.name, kind, cls, source, self))

        return register

    def entries(self, kind: Kind | None = None) -> list[Entry]:
        """Registered mechanisms, sorted by name, optionally of one kind."""
        return sorted(
            (e for e in self._entries.values() if kind is None or e.kind is kind),
            key=lambda e: e.name,
        )

    def get(self, name: str) -> Entry:
        """The entry named *name*; :func:`unknown_name` otherwise."""
        if name in self._entries:
            return self._entries[name]
        raise unknown_name(name, list(self._entries), self.broken)

    def create(self, name: str, **params: object) -> Mechanism:
        """A new instance of the mechanism *name* with validated *params*."""
        return self.get(name).create(**params)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def unknown_name(name: str, names: list[str], broken: list[BrokenPlugin]) -> DpplugError:
    """The error for *name*, which none of the working mechanisms *names* has: the quarantined
    plugin that claimed it (and why), or else the close names and every quarantined plugin,
    which may be the one that would have registered it."""
    for plugin in broken:
        if name in plugin.names:
            return PluginFault(
                f"{name!r} comes from the broken plugin {plugin.source.describe()}: "
                f"{plugin.error}; fix or uninstall that plugin"
            )
    close = difflib.get_close_matches(str(name), names, n=3)
    hint = f"did you mean {', '.join(map(repr, close))}? " if close else ""
    message = f"no mechanism named {name!r}; {hint}run `dpplug list` to see the registered ones"
    if broken:
        shown = "; ".join(f"{b.source.describe()}: {b.error}" for b in broken[:3])
        more = f"; and {len(broken) - 3} more" if len(broken) > 3 else ""
        message += f" (broken plugins, which may register it: {shown}{more})"
    return UnknownMechanism(message)


def _check_mechanism_class(cls: Any, kind: Kind) -> None:
    what = getattr(cls, "__qualname__", repr(cls))
    base = kind.base
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginFault(f"{what} is registered as a {kind.name} but is not a {base.__name__}")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise PluginFault(f"{what} does not implement {missing}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginFault(
            f"{what}.name must be lower-case words joined by dashes (e.g. 'my-sampler'), "
            f"got {name!r}"
        )
    if not isinstance(getattr(cls, "schema", None), Schema):
        raise PluginFault(f"{what}.schema must be a dpplug Schema")
    for attribute in ("summary", "reference"):
        if not isinstance(getattr(cls, attribute, None), str) or not getattr(cls, attribute):
            raise PluginFault(f"{what}.{attribute} must be a non-empty string")


def _same(plugin: object) -> object:
    return plugin


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "0+unknown"


_default: Registry | None = None


def registry(reload: bool = False) -> Registry:
    """The default registry (built-ins and installed entry points), loaded once."""
    global _default
    if _default is None or reload:
        _default = Registry.load()
    return _default


def resolve_registry(given: Registry | None) -> Registry:
    """*given*, or the default registry (:func:`registry`) when it is ``None``: an explicitly
    passed registry, even an empty one, is always the one used."""
    return registry() if given is None else given


def create(name: str, **params: object) -> Mechanism:
    """A new instance of the registered mechanism *name*, e.g. ``create("geosample", n=12,
    epsilon=Fraction(1, 2))``; parameters are validated before the mechanism exists."""
    return registry().create(name, **params)
