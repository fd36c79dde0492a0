"""Each plugin checked in its own process, with a time limit, several at once.

``dpplug conform`` checks every registered plugin in a fresh process that loads the built-in
mechanisms and only that plugin's distribution, so one plugin can neither see nor disturb
another, a plugin that hangs is stopped at its time limit, and one that crashes its process is
reported, not fatal. Results come back as each plugin finishes. The processes are forked from a
fork server started for the run (the ``forkserver`` start method), which has imported the suite
and run nothing else, no plugin included; so each worker is spared the seconds of CPU that
importing numpy, scipy, hypothesis and dpplug's core costs a fresh interpreter.

Plugins run in the user's process and can patch anything there (``docs/trust.md``). What is cheap
to detect is detected: before a third-party plugin loads, the worker fingerprints dpplug's own
functions and classes (their identity and code) and the built-in mechanisms; a plugin whose
loading changes any of them is reported as tampering and fails.

Every worker (through the fork server) starts with ``PYTHONHASHSEED`` set to the run's seed
(mod 2³²), so that a run is reproducible even for a plugin whose output depends on string
hashing, which the hygiene contract then catches by comparing with a second process started with
the next hash seed (:mod:`.reproduction`): one shared by the run's built-ins, started with the
run, and one per third-party plugin.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import Connection, wait
from typing import Any

from dpplug.conformance.reproduction import (
    HASH_SEEDS,
    from_distribution,
    other_hash_seed,
    shared_process,
)
from dpplug.conformance.results import PluginResult
from dpplug.conformance.runner import run_plugin
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import BrokenPlugin, Entry, Registry

#: How long a dead worker may take to be reaped after it was told to stop.
_GRACE_SECONDS = 5
#: What the fork server imports once for every worker: the contracts and what they use (numpy,
#: scipy, hypothesis, dpplug's core), most of a worker's start-up; plugins load in the worker.
_PRELOAD = ["dpplug.conformance.isolation"]


@dataclass(frozen=True)
class Target:
    """One mechanism to check, and the distribution its worker loads beside the built-ins
    (``None`` for a built-in)."""

    name: str
    kind: str
    source: str
    module: str
    distribution: str | None

    @classmethod
    def of(cls, entry: Entry) -> Target:
        distribution = entry.source.distribution
        return cls(
            entry.name,
            entry.kind.name,
            entry.source.describe(),
            entry.module,
            None if distribution == "dpplug" else distribution,
        )

    def failed(self, problem: str, seconds: float = 0.0) -> PluginResult:
        return PluginResult(self.name, self.kind, self.source, (), self.module, seconds, problem)


def broken_result(broken: BrokenPlugin) -> PluginResult:
    """A quarantined plugin as a failed result: its names never got to the contracts."""
    name = ", ".join(broken.names) or broken.source.plugin
    return PluginResult(name, None, broken.source.describe(), (), problem=f"broken: {broken.error}")


def fingerprint() -> dict[str, tuple[int, str]]:
    """Identity and code digest of every function and class dpplug's loaded modules define, and
    of every function in those classes: what a plugin that patches dpplug changes."""
    prints: dict[str, tuple[int, str]] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "dpplug" or module_name.startswith("dpplug.")):
            continue
        for attribute, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != module_name:
                continue
            key = f"{module_name}.{attribute}"
            prints[key] = (id(value), _code_digest(value))
            if isinstance(value, type):
                for method, function in vars(value).items():
                    prints[f"{key}.{method}"] = (id(function), _code_digest(function))
    return prints


def _code_digest(value: Any) -> str:
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if code is None:
        return ""
    return hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()


def changes(before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]]) -> list[str]:
    """What *after* changed of *before* (new names are allowed: lazy imports add modules)."""
    return sorted(key for key, value in before.items() if after.get(key, value) != value)


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Environment variables set to *values* for the processes started inside (and put
    back)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def _load(target: Target) -> tuple[Registry, str | None]:
    """The registry a worker checks *target* in, and what loading its plugin changed."""
    builtins = from_distribution(None)
    if target.distribution is None:
        return builtins, None
    before = fingerprint()
    built_in = {entry.name: entry.cls for entry in builtins}
    registry = from_distribution(target.distribution)
    changed = changes(before, fingerprint())
    changed += sorted(
        name
        for name, cls in built_in.items()
        if name not in registry or registry.get(name).cls is not cls
    )
    if not changed:
        return registry, None
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return registry, f"tampering: loading {target.distribution} changed {shown}"


def _worker(target: Target, settings: Settings, connection: Connection) -> None:
    start = time.perf_counter()
    try:
        registry, tampered = _load(target)
        if tampered is not None:
            connection.send(target.failed(tampered, time.perf_counter() - start))
            return
        connection.send(run_plugin(registry.get(target.name), settings))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the plugin broke its worker: report it, do not hang
        problem = f"crashed: {type(exc).__name__}: {exc}"
        connection.send(target.failed(problem, time.perf_counter() - start))
    finally:
        connection.close()


@dataclass
class _Running:
    target: Target
    process: Any
    connection: Connection
    started: float


def run_isolated(
    targets: Iterable[Target],
    settings: Settings,
    jobs: int,
    timeout: float,
    on_result: Callable[[PluginResult], None],
) -> list[PluginResult]:
    """Check every target in its own process, *jobs* at a time, each stopped after *timeout*
    seconds; *on_result* is told of each result as it arrives."""
    waiting, running, results = deque(targets), list[_Running](), list[PluginResult]()
    hash_seed = str(settings.seed % HASH_SEEDS)
    builtins = [target.name for target in waiting if target.distribution is None]
    with (
        shared_process(builtins, settings.seed, other_hash_seed(hash_seed)) as shared,
        _fork_server({"PYTHONHASHSEED": hash_seed, **shared}) as context,
    ):

        def start(target: Target) -> _Running:
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_worker, args=(target, settings, send), daemon=True)
            process.start()
            send.close()
            return _Running(target, process, receive, time.monotonic())

        _run(waiting, running, results, start, jobs, timeout, on_result)
    return results


@contextlib.contextmanager
def _fork_server(environment: dict[str, str]) -> Iterator[Any]:
    """The ``forkserver`` context, its server started for this run in *environment* (the run's
    hash seed, and where the built-ins' second process answers, which a third party's worker
    ignores: :class:`~.reproduction.SecondProcess`) after importing :data:`_PRELOAD`, and
    stopped on the way out (a server left by another run would have another environment)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    server: Any = forkserver._forkserver  # the one fork server (its _stop has no public name)
    server._stop()
    with _environment(environment):
        server.ensure_running()
    try:
        yield context
    finally:
        server._stop()


def _run(
    waiting: deque[Target],
    running: list[_Running],
    results: list[PluginResult],
    start: Callable[[Target], _Running],
    jobs: int,
    timeout: float,
    on_result: Callable[[PluginResult], None],
) -> None:
    """Start *waiting* targets (*start*), *jobs* at a time, and collect their results."""

    def finish(job: _Running, result: PluginResult) -> None:
        running.remove(job)
        job.connection.close()
        job.process.join(_GRACE_SECONDS)
        if job.process.is_alive():
            job.process.kill()
            job.process.join()
        results.append(result)
        on_result(result)

    while waiting or running:
        while waiting and len(running) < jobs:
            running.append(start(waiting.popleft()))
        deadline = min(job.started + timeout for job in running)
        ready = wait([job.connection for job in running], max(0.0, deadline - time.monotonic()))
        for job in [job for job in running if job.connection in ready]:
            try:
                result = job.connection.recv()
            except (EOFError, OSError):
                job.process.join(_GRACE_SECONDS)
                code = job.process.exitcode
                result = job.target.failed(
                    f"crashed: its process exited with code {code}",
                    time.monotonic() - job.started,
                )
            finish(job, result)
        for job in [job for job in running if time.monotonic() >= job.started + timeout]:
            job.process.terminate()
            finish(job, job.target.failed(f"timed out after {timeout:g} s", timeout))
