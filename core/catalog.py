"""What the installed plugins register, learnt without running their code in this process.

The command line must survive the plugins it lists: a plugin may exit, kill or hang its process
when it is imported, print to standard output, or patch whatever it finds. So the process that
prints (``dpplug list``, ``describe``, ``sample``, ``conform``) imports dpplug's built-in
mechanisms only. Each third-party distribution with entry points in the group ``dpplug`` is
loaded in a child process of its own, forked so that it starts at once, :func:`confined` (its
standard output goes to standard error, it cannot write to any file, it dies with its parent)
and stopped after a time limit. The child answers with a JSON document — the name, kind and
listing row of each mechanism the distribution registers, and its quarantined plugins — which
this process validates (:func:`_read_answer`) before using any of it: a child that dies, hangs
or answers anything else makes its distribution's plugins broken, with the reason, and the
others are listed as usual. Sources (distribution and version) come from this process's own
reading of the installed metadata, never from a child.

Names are checked across distributions here, as :class:`~dpplug.plugin_registry.Registry` does
within one: a built-in name cannot be taken, and two distributions claiming one name are both
quarantined. A command that runs a third-party mechanism (``describe``, ``sample``) then imports
that mechanism's distribution alone (:meth:`Catalog.registry_for`).
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import re
import resource
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from multiprocessing.connection import Connection, wait
from typing import Any

from dpplug.errors import AccuracyWarning, DpplugError, PluginFault
from dpplug.kinds import KINDS
from dpplug.mechanism import Mechanism
from dpplug.plugin_registry import (
    ENTRY_POINT_GROUP,
    NAME_PATTERN,
    BrokenPlugin,
    Entry,
    Registry,
    Source,
    unknown_name,
)

#: Seconds a distribution may take to load and list its mechanisms (``dpplug conform`` uses its
#: ``--timeout`` instead).
LOAD_TIMEOUT = 30.0
#: The largest answer a child may send, in bytes.
MAX_ANSWER = 1 << 20
#: The longest text (an error, a module name) kept from a child's answer.
MAX_TEXT = 2000
#: Children loading at once.
_AT_ONCE = 8
#: prctl(2)'s option to be signalled when the parent dies (Linux).
_PR_SET_PDEATHSIG = 1
_NAME = re.compile(NAME_PATTERN)


def die_with_parent() -> None:
    """Ask the kernel to kill this process (SIGKILL) when its parent dies, so a child left by a
    killed command does not run on (Linux; elsewhere nothing is done)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def confined(output: int) -> None:
    """Confine this process before it runs plugin code: its standard output and error (the C
    library's too) go to *output* (a :class:`Relay`'s pipe), so nothing a plugin prints reaches
    a JSON document on standard output; it cannot write to any file (``RLIMIT_FSIZE`` 0, soft
    and hard, so it cannot be raised again, and ``SIGXFSZ`` ignored, so a write fails with
    ``EFBIG`` instead of killing the process), so a plugin cannot write dpplug's levels cache or
    anything else; and it dies with its parent."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(output, 1)
    os.dup2(output, 2)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    die_with_parent()


class Relay:
    """What a :func:`confined` child prints, through a pipe (``send`` is the child's end):
    passed on to this process's standard error as it comes, its last :data:`TAIL` bytes kept
    to explain how the child ended."""

    #: How much of the child's last output is kept, in bytes.
    TAIL = 4096
    #: The most read at once (in chunks of 64 KiB), so a child that never stops printing
    #: cannot hold up the rest.
    CHUNKS = 16

    def __init__(self, context: Any) -> None:
        self.receive, self.send = context.Pipe(duplex=False)
        self.open = True
        self.tail = bytearray()

    def started(self) -> None:
        """The child has its end: close this process's copy, so the pipe ends with the child."""
        self.send.close()

    def drain(self, wait_seconds: float = 0.0) -> None:
        """Pass on what is waiting (waiting up to *wait_seconds* for more)."""
        for _ in range(self.CHUNKS):
            if not self.open or not select.select([self.receive], [], [], wait_seconds)[0]:
                return
            chunk = os.read(self.receive.fileno(), 65536)
            if not chunk:
                self.close()
                return
            os.write(2, chunk)
            self.tail += chunk
            del self.tail[: -self.TAIL]

    def close(self) -> None:
        if self.open:
            self.receive.close()
            self.open = False

    def last_output(self) -> str:
        """The child's last three distinct lines, for a diagnosis (empty if it printed
        nothing)."""
        lines = [line.strip() for line in self.tail.decode(errors="replace").splitlines()]
        last: list[str] = []
        for line in reversed(lines):
            if line and line not in last:
                last.insert(0, line if len(line) <= 160 else line[:159] + "…")
            if len(last) == 3:
                break
        return f"; its last output: {' | '.join(last)!r}" if last else ""


def _text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def listing_row(entry: Entry) -> dict[str, Any]:
    """How ``dpplug list`` shows *entry*: its name, kind, source and module, and the form and
    neighbouring relation of the guarantee of its first conformance case, or ``"broken"`` with
    the error that case raises. The levels are added by the caller."""
    row: dict[str, Any] = {
        "name": entry.name,
        "kind": entry.kind.name,
        "source": {
            "distribution": entry.source.distribution,
            "version": entry.source.version,
            "plugin": entry.source.plugin,
        },
        "module": _text(entry.module),
    }
    try:
        example = example_instance(entry)
        guarantee = example.guarantee if example is not None else None
        form = guarantee.form if guarantee else None
        relation = guarantee.neighbouring.relation.value if guarantee else None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a plugin whose example or guarantee breaks
        error = str(exc) if isinstance(exc, DpplugError) else f"{type(exc).__name__}: {exc}"
        row.update(status="broken", error=error, form=None, relation=None)
    else:
        row.update(status="ok", error=None, form=_text(form) if form else None, relation=relation)
    return row


def example_instance(entry: Entry, params: dict[str, object] | None = None) -> Mechanism | None:
    """An instance for display: with *params*, else the first conformance case, else None.

    A conformance case is the suite's tiny input, not the user's: accuracy warnings about it
    (for example, that its n is too small for any bin to be reliably released) say nothing
    about the user's use and are not shown; with the user's *params* they are."""
    if params:
        return entry.create(**params)
    cases = entry.cls.conformance_cases
    if not cases:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        return entry.create(**cases[0])


def broken_row(broken: BrokenPlugin) -> dict[str, Any]:
    """How ``dpplug list`` shows a quarantined plugin: by its plugin (entry point) name, with
    the mechanism names it claimed."""
    return {
        "name": broken.source.plugin,
        "kind": None,
        "form": None,
        "relation": None,
        "source": {
            "distribution": broken.source.distribution,
            "version": broken.source.version,
            "plugin": broken.source.plugin,
        },
        "status": "broken",
        "error": broken.error,
        "claimed": list(broken.names),
    }


@dataclass(frozen=True)
class Listed:
    """A third-party mechanism as its distribution's child process listed it: its name, kind,
    source (from this process's metadata), defining module and listing row."""

    name: str
    kind: str
    source: Source
    module: str
    row: dict[str, Any]


@dataclass(frozen=True)
class Catalog:
    """The built-in mechanisms (imported here), the third-party ones (listed by their children)
    and the quarantined plugins of every installed distribution."""

    builtins: Registry
    listed: tuple[Listed, ...]
    broken: tuple[BrokenPlugin, ...]

    def rows(self) -> list[dict[str, Any]]:
        """Every mechanism's listing row, sorted by name, then the quarantined plugins'."""
        rows = [listing_row(entry) for entry in self.builtins]
        rows += [listed.row for listed in self.listed]
        rows.sort(key=lambda row: str(row["name"]))
        return rows + [broken_row(b) for b in [*self.builtins.broken, *self.broken]]

    @property
    def quarantined(self) -> list[BrokenPlugin]:
        """Every quarantined plugin, built-in families first."""
        return [*self.builtins.broken, *self.broken]

    def names(self) -> list[str]:
        return sorted([entry.name for entry in self.builtins] + [m.name for m in self.listed])

    def find(self, name: str) -> Entry | Listed:
        """The built-in entry or the listed mechanism *name*; an error saying what to do
        otherwise (:meth:`unknown`)."""
        if name in self.builtins:
            return self.builtins.get(name)
        for listed in self.listed:
            if listed.name == name:
                return listed
        raise self.unknown(name)

    def unknown(self, name: str) -> DpplugError:
        """The error for *name*, which no working plugin registers
        (:func:`~dpplug.plugin_registry.unknown_name`)."""
        return unknown_name(name, self.names(), self.quarantined)

    def registry_for(self, name: str) -> Registry:
        """A registry holding *name*: the built-ins, or the built-ins and the one distribution
        that lists *name*, imported in this process (a command asked to run it)."""
        found = self.find(name)
        if isinstance(found, Entry):
            return self.builtins
        registry = Registry.load(entry_points=of_distribution(found.source.distribution))
        if name not in registry:
            raise PluginFault(
                f"{found.source.describe()} listed {name!r} in its loading process but did not "
                "register it when imported here; report it to the plugin's authors"
            )
        return registry


def of_distribution(distribution: str) -> Callable[[metadata.EntryPoint], bool]:
    """Selects the entry points of *distribution* (``"(unknown)"``: those with no metadata)."""
    return lambda ep: (ep.dist.name if ep.dist else "(unknown)") == distribution


def installed() -> dict[str, list[Source]]:
    """Every distribution with entry points in the group ``dpplug`` → its plugins' sources, read
    from the installed metadata only (nothing is imported)."""
    found: dict[str, list[Source]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        distribution = ep.dist.name if ep.dist else "(unknown)"
        version = ep.dist.version if ep.dist else ""
        found.setdefault(distribution, []).append(Source(ep.name, distribution, version))
    return found


def load_catalog(timeout: float = LOAD_TIMEOUT) -> Catalog:
    """The built-ins, imported here, and what every installed distribution registers, each
    loaded in its own :func:`confined` child stopped after *timeout* seconds."""
    builtins = Registry.load(entry_points=False)
    distributions = installed()
    answers = _run_children(sorted(distributions), timeout)
    listed: list[Listed] = []
    broken: list[BrokenPlugin] = []
    for distribution, answer in answers.items():
        sources = {source.plugin: source for source in distributions[distribution]}
        if isinstance(answer, str):
            broken += [BrokenPlugin(source, answer) for source in sources.values()]
            continue
        try:
            found, failed = _read_answer(answer, sources)
        except ValueError as exc:
            reason = f"its loading process answered something dpplug cannot read ({exc})"
            broken += [BrokenPlugin(source, reason) for source in sources.values()]
            continue
        listed += found
        broken += failed
    listed, clashed = _without_clashes(listed, builtins)
    return Catalog(builtins, tuple(sorted(listed, key=lambda m: m.name)), (*broken, *clashed))


def _without_clashes(
    listed: list[Listed], builtins: Registry
) -> tuple[list[Listed], list[BrokenPlugin]]:
    """*listed* without names taken by a built-in (that plugin quarantined) or claimed by two
    distributions (both quarantined, each error naming both)."""
    claims: dict[str, list[Listed]] = {}
    for mechanism in listed:
        claims.setdefault(mechanism.name, []).append(mechanism)
    quarantined: dict[Source, str] = {}
    for name, claimants in claims.items():
        if name in builtins:
            for mechanism in claimants:
                quarantined[mechanism.source] = (
                    f"DuplicateMechanismName: mechanism name {name!r} is registered by both "
                    f"{builtins.get(name).source.describe()} and {mechanism.source.describe()}; "
                    "built-in names cannot be taken: rename it"
                )
        elif len(claimants) > 1:
            both = " and ".join(sorted(m.source.describe() for m in claimants))  # canonical
            for mechanism in claimants:
                quarantined[mechanism.source] = (
                    f"DuplicateMechanismName: mechanism name {name!r} is registered by {both}; "
                    "neither gets it: rename one of them (or uninstall one)"
                )
    kept = [m for m in listed if m.source not in quarantined]
    broken = [
        BrokenPlugin(source, error, tuple(m.name for m in listed if m.source == source))
        for source, error in quarantined.items()
    ]
    return kept, broken


def _read_answer(
    answer: object, sources: dict[str, Source]
) -> tuple[list[Listed], list[BrokenPlugin]]:
    """A child's answer, validated: every field of the expected type and size, every plugin one
    of its distribution's entry points, every name a valid mechanism name and kind a kind."""
    if not isinstance(answer, dict) or set(answer) != {"entries", "broken"}:
        raise ValueError("not an object with entries and broken")
    entries, failed = answer["entries"], answer["broken"]
    if not isinstance(entries, list) or not isinstance(failed, list):
        raise ValueError("entries and broken must be lists")
    kinds = {kind.name for kind in KINDS}
    listed = []
    for item in entries:
        source = _source(item, sources)
        name, kind, row = item.get("name"), item.get("kind"), item.get("row")
        if not isinstance(name, str) or not _NAME.match(name) or kind not in kinds:
            raise ValueError(f"a mechanism with the name {name!r} and kind {kind!r}")
        module = _bounded(item.get("module"))
        listed.append(Listed(name, kind, source, module, _row(row, name, kind, module, source)))
    broken = []
    for item in failed:
        source = _source(item, sources)
        names = item.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("broken names must be a list of strings")
        broken.append(
            BrokenPlugin(source, _bounded(item.get("error")), tuple(_bounded(n) for n in names))
        )
    return listed, broken


def _source(item: object, sources: dict[str, Source]) -> Source:
    if not isinstance(item, dict) or item.get("plugin") not in sources:
        raise ValueError("an item of a plugin its distribution does not declare")
    return sources[item["plugin"]]


def _bounded(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{type(value).__name__} where a string was expected")
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def _row(row: object, name: str, kind: str, module: str, source: Source) -> dict[str, Any]:
    """The listing row of a listed mechanism, rebuilt from the fields already validated (name,
    kind, module), its source (this process's metadata) and the child's validated status,
    error, form and relation."""
    if not isinstance(row, dict) or row.get("status") not in ("ok", "broken"):
        raise ValueError(f"the listing row of {name!r}")
    form, relation, error = row.get("form"), row.get("relation"), row.get("error")
    if form not in (None, "pure", "approximate") or not (relation is None or _short(relation)):
        raise ValueError(f"the guarantee of {name!r}")
    return {
        "name": name,
        "kind": kind,
        "source": {
            "distribution": source.distribution,
            "version": source.version,
            "plugin": source.plugin,
        },
        "module": module,
        "status": row["status"],
        "error": None if error is None else _bounded(error),
        "form": form,
        "relation": relation,
    }


def _short(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 100


def _list_distribution(distribution: str, answer: Connection, output: Connection) -> None:
    """The child: load the built-ins and *distribution*, and answer with what it registered."""
    confined(output.fileno())
    output.close()
    registry = Registry.load(entry_points=of_distribution(distribution))
    entries = [
        {
            "name": entry.name,
            "kind": entry.kind.name,
            "plugin": entry.source.plugin,
            "module": _text(entry.module)[:MAX_TEXT],
            "row": listing_row(entry),
        }
        for entry in registry
        if entry.source.distribution == distribution
    ]
    broken = [
        {"plugin": b.source.plugin, "error": b.error[:MAX_TEXT], "names": list(b.names)}
        for b in registry.broken
        if b.source.distribution == distribution
    ]
    answer.send_bytes(json.dumps({"entries": entries, "broken": broken}).encode())
    answer.close()


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


@dataclass
class _Child:
    distribution: str
    process: Any
    answer: Connection
    relay: Relay
    deadline: float


def _run_children(distributions: Iterable[str], timeout: float) -> dict[str, object]:
    """Each distribution's answer (parsed JSON), or why there is none, from its own child,
    :data:`_AT_ONCE` at a time, each stopped after *timeout* seconds."""
    context = _context()
    waiting = list(distributions)
    answers: dict[str, object] = {}
    running: list[_Child] = []
    try:
        while waiting or running:
            while waiting and len(running) < _AT_ONCE:
                running.append(_start_child(context, waiting.pop(0), timeout))
            deadline = min(child.deadline for child in running)
            sources = [child.answer for child in running]
            sources += [child.relay.receive for child in running if child.relay.open]
            ready = wait(sources, max(0.0, min(deadline - time.monotonic(), 1.0)))
            for child in list(running):
                if child.relay.receive in ready:
                    child.relay.drain()
                if child.answer in ready:
                    running.remove(child)
                    answers[child.distribution] = _answer_of(child)
                elif time.monotonic() >= child.deadline:
                    running.remove(child)
                    _stop(child)
                    answers[child.distribution] = f"did not load within {timeout:g} s"
    finally:
        for child in running:
            _stop(child)
    return answers


def _start_child(context: Any, distribution: str, timeout: float) -> _Child:
    receive, send = context.Pipe(duplex=False)
    relay = Relay(context)
    process = context.Process(
        target=_list_distribution, args=(distribution, send, relay.send), daemon=True
    )
    process.start()
    send.close()
    relay.started()
    return _Child(distribution, process, receive, relay, time.monotonic() + timeout)


def _answer_of(child: _Child) -> object:
    try:
        text = child.answer.recv_bytes(MAX_ANSWER)
    except (EOFError, OSError) as exc:
        child.process.join(5)
        too_long = isinstance(exc, OSError) and child.process.exitcode is None
        how = death(child.process.exitcode)
        child.relay.drain(0.2)
        last = child.relay.last_output()
        _stop(child)
        if too_long:
            return f"its loading process sent more than {MAX_ANSWER} bytes"
        return f"its loading process {how} while importing it{last}"
    child.relay.drain(0.2)
    _stop(child)
    try:
        return json.loads(text)
    except ValueError:
        return "its loading process answered something that is not JSON"


def _stop(child: _Child) -> None:
    if child.process.is_alive():
        child.process.kill()
    child.process.join()
    child.answer.close()
    child.relay.close()


def death(exitcode: int | None) -> str:
    """How a process ended, in words: "exited with code 3", "was killed by SIGKILL"."""
    if exitcode is None:
        return "did not end"
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"
