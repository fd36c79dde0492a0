"""Each plugin checked in its own process, with a time limit, several at once; the parent process
(``dpplug conform``) never runs plugin code, and it alone turns results into levels and records
them.

The parent learns what to check from :func:`dpplug.catalog.load_catalog` (metadata, and a
confined child per distribution). Each plugin is then checked in a worker: a process forked
from a fork server started for the run (the ``forkserver`` start method), which has imported the
suite and run nothing else, so each worker is spared the seconds of CPU that importing numpy,
scipy, hypothesis and dpplug's core costs a fresh interpreter. A worker is
:func:`~dpplug.catalog.confined` before anything else: what it prints (the C library's output
included) comes to the parent through a pipe, is passed on to standard error and its last lines
kept to explain a crash, so standard output carries only the parent's table or JSON; it cannot
write to any file, so a plugin cannot write the levels cache; and it dies with the fork server,
which stops when the parent does, so killing ``dpplug conform`` stops its workers.

A worker loads the built-in mechanisms, freezes the suite (:class:`.freeze.Frozen`), loads only
the plugin's distribution, and reports tampering if loading it changed anything frozen; it then
runs the contracts, sending each result as it comes (:mod:`.messages`: JSON, read back with
every field checked, never unpickled), and compares the frozen suite again at the end. A worker
that dies while a contract runs (a plugin exiting, or the suite's arithmetic aborting on a
plugin's garbage output, as GMP does on an integer too large) fails that contract with how the
process ended and its last output, and a new worker goes on from the next contract; one that
hangs is stopped at the plugin's time limit, its finished contracts kept.

Every worker (through the fork server) starts with ``PYTHONHASHSEED`` set to the run's seed
(mod 2³²), so that a run is reproducible even for a plugin whose output depends on string
hashing, which the hygiene contract then catches by comparing with a second process started with
the next hash seed (:mod:`.reproduction`): one shared by the run's built-ins, started with the
run, and one per third-party plugin.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing import forkserver
from multiprocessing.connection import Connection, wait
from typing import Any

from dpplug.catalog import Listed, Relay, confined, death
from dpplug.conformance.coverage import Key
from dpplug.conformance.freeze import Frozen, describe
from dpplug.conformance.messages import (
    MAX_MESSAGE,
    contract_message,
    encode,
    read,
    required_message,
)
from dpplug.conformance.reproduction import (
    HASH_SEEDS,
    from_distribution,
    other_hash_seed,
    shared_process,
)
from dpplug.conformance.results import ContractResult, Outcome, PluginResult
from dpplug.conformance.runner import CONTRACTS, contract_results, required_of
from dpplug.conformance.settings import Settings
from dpplug.plugin_registry import BrokenPlugin, Entry, Registry

#: How long a dead worker may take to be reaped after it was told to stop.
_GRACE_SECONDS = 5
#: What the fork server imports once for every worker: the contracts and what they use (numpy,
#: scipy, hypothesis, dpplug's core) and the built-in mechanisms; plugins load in the worker.
_PRELOAD = ["dpplug.conformance.isolation", "dpplug.plugins"]
_CONTRACTS = list(CONTRACTS)


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
    def of(cls, found: Entry | Listed) -> Target:
        """The target of a built-in entry or of a mechanism a distribution listed."""
        if isinstance(found, Entry):
            return cls(found.name, found.kind.name, found.source.describe(), found.module, None)
        source = found.source
        return cls(found.name, found.kind, source.describe(), found.module, source.distribution)

    def failed(self, problem: str, seconds: float = 0.0) -> PluginResult:
        return PluginResult(self.name, self.kind, self.source, (), self.module, seconds, problem)


def broken_name(broken: BrokenPlugin) -> str:
    """The row name of a quarantined plugin: ``distribution:plugin``, never a mechanism's name
    (those have no colon), so a consumer keyed by name cannot mistake it for the mechanism it
    claimed."""
    return f"{broken.source.distribution}:{broken.source.plugin}"


def broken_result(broken: BrokenPlugin) -> PluginResult:
    """A quarantined plugin as a failed result: its names never got to the contracts."""
    claimed = f" (it claimed {', '.join(broken.names)})" if broken.names else ""
    return PluginResult(
        broken_name(broken),
        None,
        broken.source.describe(),
        (),
        problem=f"broken: {broken.error}{claimed}",
    )


def _load(target: Target) -> tuple[Entry | None, Frozen | None, str | None]:
    """The entry a worker checks, the suite frozen before the plugin loaded (``None`` for a
    built-in, which is part of what is frozen), and what went wrong, if anything."""
    builtins = from_distribution(None)
    if target.distribution is None:
        return builtins.get(target.name), None, None
    frozen = Frozen()
    registry = from_distribution(target.distribution)
    changed = frozen.changes() + sorted(
        f"the built-in {entry.name}"
        for entry in builtins
        if entry.name not in registry or registry.get(entry.name).cls is not entry.cls
    )
    if changed:
        problem = f"tampering: loading {target.distribution} changed {describe(changed)}"
        return None, None, problem
    return _registered(registry, target), frozen, None


def _registered(registry: Registry, target: Target) -> Entry:
    """*target*'s entry in the registry its worker loaded: it must come from its distribution."""
    if target.name in registry:
        entry = registry.get(target.name)
        if entry.source.distribution == target.distribution:
            return entry
    for broken in registry.broken:
        if broken.source.distribution == target.distribution:
            raise _Unlisted(f"broken in its worker: {broken.error}")
    raise _Unlisted(
        f"{target.distribution} did not register {target.name!r} in its worker (it did when listed)"
    )


class _Unlisted(Exception):
    """The worker's registry does not hold the target its distribution listed."""


def _worker(
    target: Target,
    settings: Settings,
    first: int,
    declared: bool,
    messages: Connection,
    output: Connection,
) -> None:
    """Check *target* from its *first* contract on (*declared*: whether its declaration passed,
    when *first* is past it), sending :mod:`.messages` on *messages*; what it prints goes to
    *output*."""
    _let_the_server_stop()
    confined(output.fileno())
    output.close()

    def send(message: dict[str, Any]) -> None:
        messages.send_bytes(encode(message))

    try:
        try:
            entry, frozen, problem = _load(target)
        except _Unlisted as exc:
            entry, frozen, problem = None, None, str(exc)
        if entry is None:
            send({"problem": problem})
            return
        send(required_message(required_of(entry)))
        for result in contract_results(entry, settings, first, declared):
            send(contract_message(result))
        changed = frozen.changes() if frozen is not None else []
        if changed:
            send({"problem": f"tampering: while its contracts ran, {describe(changed)} changed"})
            return
        send({"done": True})
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the plugin broke its worker: report it, do not hang
        send({"problem": f"crashed: {type(exc).__name__}: {exc}"})
    finally:
        messages.close()


def _let_the_server_stop() -> None:
    """Close this worker's copy of the fork server's lifeline (each process it forks is given
    the write end of the pipe whose end tells the server to stop), so the server stops when the
    parent dies, and this worker with it (:func:`~dpplug.catalog.die_with_parent`)."""
    server: Any = forkserver._forkserver
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None


@dataclass
class _Job:
    """One plugin being checked: its current worker, and what its workers have reported."""

    target: Target
    started: float
    process: Any = None
    messages: Connection | None = None
    output: Relay | None = None
    required: tuple[Key, ...] | None = None
    results: list[ContractResult] = field(default_factory=list)

    @property
    def running(self) -> str:
        """What the worker is doing, in words: loading, or the contract it runs."""
        if self.required is None:
            return "loading"
        done = len(self.results)
        return f"{_CONTRACTS[min(done, len(_CONTRACTS) - 1)]} ({done + 1}/{len(_CONTRACTS)})"

    def result(self, problem: str | None = None) -> PluginResult:
        t = self.target
        return PluginResult(
            t.name,
            t.kind,
            t.source,
            () if problem and problem.startswith("tampering") else tuple(self.results),
            t.module,
            time.monotonic() - self.started,
            problem,
            self.required or (),
        )


def run_isolated(
    targets: Iterable[Target],
    settings: Settings,
    jobs: int,
    timeout: float,
    on_result: Callable[[PluginResult], None],
    on_progress: Callable[[dict[str, str]], None] | None = None,
) -> list[PluginResult]:
    """Check every target in its own process, *jobs* at a time, each stopped after *timeout*
    seconds; *on_result* is told of each result as it arrives, *on_progress* of what each
    running plugin is doing (name → loading, or the contract running) whenever it changes."""
    waiting, results = deque(targets), list[PluginResult]()
    hash_seed = str(settings.seed % HASH_SEEDS)
    builtins = [target.name for target in waiting if target.distribution is None]
    with (
        shared_process(builtins, settings.seed, other_hash_seed(hash_seed)) as shared,
        _fork_server({"PYTHONHASHSEED": hash_seed, **shared}) as context,
    ):

        def start(job: _Job) -> None:
            receive, send = context.Pipe(duplex=False)
            relay = Relay(context)
            first = len(job.results)
            declared = job.results[0].passed if job.results else True
            job.process = context.Process(
                target=_worker,
                args=(job.target, settings, first, declared, send, relay.send),
                daemon=True,
            )
            job.process.start()
            send.close()
            relay.started()
            job.messages, job.output = receive, relay

        _Scheduler(waiting, results, start, jobs, timeout, on_result, on_progress).run()
    return results


@contextlib.contextmanager
def _fork_server(environment: dict[str, str]) -> Iterator[Any]:
    """The ``forkserver`` context, its server started for this run in *environment* (the run's
    hash seed, and where the built-ins' second process answers, which a third party's worker
    ignores: :class:`~.reproduction.SecondProcess`) after importing :data:`_PRELOAD`, and
    stopped on the way out (a server left by another run would have another environment). The
    server stops by itself when this process dies (it reads the end of a pipe this process
    holds), and its workers with it (:func:`~dpplug.catalog.die_with_parent`)."""
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


@dataclass
class _Scheduler:
    """Starts waiting targets, *jobs* at a time, reads their workers' messages and output, and
    finishes each plugin with its result."""

    waiting: deque[Target]
    results: list[PluginResult]
    start: Callable[[_Job], None]
    jobs: int
    timeout: float
    on_result: Callable[[PluginResult], None]
    on_progress: Callable[[dict[str, str]], None] | None
    running: list[_Job] = field(default_factory=list)

    def run(self) -> None:
        try:
            while self.waiting or self.running:
                while self.waiting and len(self.running) < self.jobs:
                    job = _Job(self.waiting.popleft(), time.monotonic())
                    self.start(job)
                    self.running.append(job)
                self._progress()
                self._step()
        finally:
            for job in self.running:  # interrupted: no worker outlives the run
                self._stop(job)

    def _progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress({job.target.name: job.running for job in self.running})

    def _step(self) -> None:
        deadline = min(job.started + self.timeout for job in self.running)
        sources: dict[Any, _Job] = {}
        for job in self.running:
            sources[job.messages] = job
            if job.output is not None and job.output.open:
                sources[job.output.receive] = job
        ready = wait(list(sources), max(0.0, min(deadline - time.monotonic(), 1.0)))
        for job in list(self.running):
            if job.output is not None and job.output.receive in ready:
                job.output.drain()
            if job.messages in ready and job in self.running:
                self._receive(job)
        for job in list(self.running):
            if time.monotonic() >= job.started + self.timeout:
                self._stop(job)
                self._finish(job, f"timed out after {self.timeout:g} s")

    def _receive(self, job: _Job) -> None:
        assert job.messages is not None
        try:
            payload = job.messages.recv_bytes(MAX_MESSAGE)
        except (EOFError, OSError):
            self._ended(job)
            return
        due = _CONTRACTS[len(job.results)] if len(job.results) < len(_CONTRACTS) else None
        try:
            message = read(payload, due)
        except (ValueError, TypeError, KeyError) as exc:
            self._stop(job)
            self._finish(job, f"its worker sent a message dpplug cannot read: {exc}")
            return
        if message.required is not None:
            job.required = job.required or message.required
        elif message.contract is not None:
            job.results.append(message.contract)
        elif message.problem is not None:
            self._stop(job)
            self._finish(job, message.problem)
        elif message.done:
            self._stop(job)
            complete = len(job.results) == len(_CONTRACTS)
            self._finish(job, None if complete else "crashed: its worker ended early")

    def _ended(self, job: _Job) -> None:
        """The worker ended without finishing: fail what it was doing, and go on from the next
        contract in a new worker if there is one."""
        job.process.join(_GRACE_SECONDS)
        how = death(job.process.exitcode)
        last = ""
        if job.output is not None:
            job.output.drain(0.2)
            last = job.output.last_output()
        self._stop(job)
        if job.required is None:
            self._finish(job, f"crashed: its process {how} while loading the plugin{last}")
            return
        contract = _CONTRACTS[len(job.results)]
        job.results.append(
            ContractResult(
                contract,
                Outcome.FAILED,
                f"its process {how} while this contract ran{last} (the plugin ended it, or "
                "its outputs broke the suite's arithmetic: check they are of the declared type "
                "and range)",
            )
        )
        if len(job.results) < len(_CONTRACTS):
            self.start(job)
        else:
            self._finish(job, None)

    def _stop(self, job: _Job) -> None:
        """Stop the job's worker, if it runs, and close its pipes."""
        if job.process is not None:
            if job.process.is_alive():
                job.process.kill()
            job.process.join(_GRACE_SECONDS)
        if job.messages is not None:
            job.messages.close()
        if job.output is not None:
            job.output.close()

    def _finish(self, job: _Job, problem: str | None) -> None:
        self.running.remove(job)
        result = job.result(problem)
        self.results.append(result)
        self.on_result(result)
