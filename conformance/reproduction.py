"""The hygiene contract's second process: a plugin's seeded hygiene calls made again in a fresh
interpreter started with another ``PYTHONHASHSEED``, whose outputs must be the first process's.

Randomness must come from the RandomSource alone (``docs/conformance.md``, hygiene). A plugin
whose output also depends on Python's per-process string hashing (noise drawn in the order of
``hash(label)``, a draw rotated by a hash) or on state made when its module was imported is
reproducible within one process and has the declared law, so nothing inside one process sees it;
comparing the same seeded calls across two processes does. Outputs are compared through
:func:`fingerprint`, a digest of their content (arrays by dtype, shape and bytes, dataclasses by
their compared fields, sets sorted), which is the same in every process for a plugin that draws
only from its source.

:func:`start` launches the second process (``subprocess``, so that it also runs inside the
daemonic workers of :mod:`.isolation`) while the first goes on with its own checks; it rebuilds
the plugin's registry the way it was loaded (the built-ins, a distribution's entry points, or a
module registered at run time, imported by name with the first process's ``sys.path``) and
answers with the fingerprint of every call of every declared case, in the order
:func:`seeded_outputs` makes them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dpplug.catalog import die_with_parent, of_distribution
from dpplug.conformance.probes import probes
from dpplug.conformance.probes.base import Call, Probe
from dpplug.plugin_registry import Entry, Registry, Source
from dpplug.randomness import SeededSource

#: Seconds the second process may take (it imports dpplug and makes a few small calls).
TIMEOUT = 300
#: Values of ``PYTHONHASHSEED`` (0 to 2³² − 1).
HASH_SEEDS = 1 << 32
#: The environment variable naming the file of the run's shared answers for the built-ins.
SHARED = "DPPLUG_SHARED_REPRODUCTION"
#: The diagnosis of outputs that differ between the two processes.
OTHER_PROCESS = (
    "output depends on something besides the RandomSource (differs between processes: hash "
    "seed, import-time state)"
)
_BOOT = (
    "import json, sys; request = json.loads(sys.argv[1]); sys.path[:] = request['path']; "
    "from dpplug.conformance.reproduction import main; main(request)"
)

#: One seeded call's output: (case, call, fingerprint).
Row = tuple[str, str, str]


def canonical(value: object) -> object:
    """What *value* says, built of tuples, strings and numbers only: arrays by dtype, shape and
    content, dataclasses by their compared fields, mappings in their order, sets sorted; any
    other object by its type alone."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            return ("array", value.dtype.str, value.shape, value.tobytes().hex())
        return ("array", value.dtype.str, value.shape, canonical(value.tolist()))
    if isinstance(value, np.generic):
        return canonical(value.item())
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, list | tuple):
        return tuple(canonical(item) for item in value)
    if isinstance(value, dict):
        return ("dict", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return ("set", tuple(sorted(repr(canonical(item)) for item in value)))
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        return (
            kind,
            tuple((f.name, canonical(getattr(value, f.name))) for f in fields if f.compare),
        )
    if hasattr(value, "numerator") and hasattr(value, "denominator"):  # Fraction, mpq, mpz
        return (kind, str(value))
    return (kind,)


def fingerprint(value: object) -> str:
    """A digest of :func:`canonical` *value*."""
    return hashlib.sha256(repr(canonical(value)).encode()).hexdigest()[:32]


def seeded_row(probe: Probe, call: Call, output: object) -> Row:
    return (probe.where, call.what, fingerprint(output))


def seeded_outputs(entry: Entry, seed: int) -> list[Row]:
    """Every hygiene call of every declared case of *entry*, each on its case's instance with
    ``SeededSource(seed)``, in order (what the first process records in the same order)."""
    declared = list(probes(entry))
    return [
        seeded_row(probe, call, call.run(SeededSource(seed)))
        for probe in declared
        for call in probe.calls(seed)
    ]


def from_distribution(distribution: str | None) -> Registry:
    """The built-ins, and the entry points of *distribution* (none if ``None``)."""
    if distribution is None:
        return Registry.load(entry_points=False)
    return Registry.load(entry_points=of_distribution(distribution))


class Unavailable(Exception):
    """The second process cannot load the plugin (a plugin object registered at run time that is
    not an importable module; a module that registers the mechanism only when called, not when
    imported, is answered the same way per name)."""


def _registry(source: Source) -> Registry:
    if source.distribution == "dpplug":
        return from_distribution(None)
    if source.distribution != "(runtime)":
        return from_distribution(source.distribution)
    try:
        module = importlib.import_module(source.plugin)
    except ImportError as exc:
        raise Unavailable(f"its plugin {source.plugin!r} is not an importable module") from exc
    return Registry.load([module], entry_points=False)


def main(request: dict[str, Any]) -> None:
    """The second process: :func:`seeded_outputs` of each requested plugin, as one JSON object
    (name → rows, or why there are none) on standard output, or in the file ``out`` if the
    request names one (written whole, then renamed into place). What plugins print goes to
    standard error. The process dies with the one that started it."""
    die_with_parent()
    answer_to, sys.stdout = sys.stdout, sys.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answers = _answers(request)
    text = json.dumps(answers)
    if "out" not in request:
        answer_to.write(text + "\n")
        answer_to.flush()
        return
    partial = Path(request["out"] + ".partial")
    partial.write_text(text)
    partial.replace(request["out"])


def _answers(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    source = Source(request["plugin"], request["distribution"], request["version"])
    try:
        registry = _registry(source)
    except Unavailable as exc:
        return {name: {"unavailable": str(exc)} for name in request["names"]}
    answers: dict[str, dict[str, Any]] = {}
    for name in request["names"]:
        if name not in registry:  # registered at run time, not by importing its module
            answers[name] = {
                "unavailable": f"importing {source.plugin!r} does not register {name!r}"
            }
            continue
        try:
            answers[name] = {"rows": seeded_outputs(registry.get(name), request["seed"])}
        except BaseException as exc:  # whatever the plugin raises there is the answer
            answers[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return answers


def other_hash_seed(own: str) -> str:
    """A ``PYTHONHASHSEED`` other than *own* (a process's): the next value if *own* is one,
    else 0 (a randomised process's hash key is 0 with probability 2⁻¹²⁸)."""
    return str((int(own) + 1) % HASH_SEEDS) if own.isdecimal() else "0"


def _spawn(
    source: Source, names: list[str], seed: int, hash_seed: str, out: str | None
) -> subprocess.Popen[str]:
    request: dict[str, Any] = {
        "path": sys.path,
        "plugin": source.plugin,
        "distribution": source.distribution,
        "version": source.version,
        "names": names,
        "seed": seed,
    }
    if out is not None:
        request["out"] = out
    return subprocess.Popen(
        [sys.executable, "-c", _BOOT, json.dumps(request)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if out is None else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        text=True,
    )


class SecondProcess:
    """The second process's answer for one plugin (see the module docstring): its own process,
    started at once and running while the first checks, or, for a built-in checked by
    :mod:`.isolation`, the answer of the run's shared process for the built-ins
    (:func:`shared_process`). :meth:`problem` compares it with the first process's rows."""

    def __init__(self, entry: Entry, seed: int) -> None:
        self.name = entry.name
        self.hash_seed = other_hash_seed(os.environ.get("PYTHONHASHSEED", ""))
        shared = os.environ.get(SHARED)
        self.shared = Path(shared) if shared and entry.source.distribution == "dpplug" else None
        self.process = (
            None if self.shared else _spawn(entry.source, [entry.name], seed, self.hash_seed, None)
        )
        self.unavailable: str | None = None

    def _answer(self) -> dict[str, Any] | str:
        """This plugin's answer, or what went wrong."""
        if self.process is not None:
            try:
                out, _ = self.process.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                return f"did not finish within {TIMEOUT} s"
            text = (out.strip().splitlines() or [""])[-1]
        else:
            assert self.shared is not None
            deadline = time.monotonic() + TIMEOUT
            while not self.shared.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            text = self.shared.read_text() if self.shared.exists() else ""
        try:
            answer: dict[str, Any] = json.loads(text)[self.name]
        except (KeyError, ValueError):
            return "gave no result"
        return answer

    def problem(self, rows: list[Row]) -> str | None:
        """Where the second process's outputs differ from *rows* (``None``: they do not, or it
        cannot load the plugin, which :attr:`unavailable` then says)."""
        where = f"in a second process (PYTHONHASHSEED={self.hash_seed}, a fresh import)"
        answer = self._answer()
        if isinstance(answer, str):
            return f"the seeded hygiene calls {answer} {where}"
        if "unavailable" in answer:
            self.unavailable = answer["unavailable"]
            return None
        if "error" in answer:
            return f"the seeded hygiene calls raised {answer['error']} {where}"
        second = [tuple(row) for row in answer["rows"]]
        for first, other in zip(rows, second, strict=False):
            if first != other:
                case, call, _ = first
                return (
                    f"{case}: {call} gave another output from the same seed {where}: "
                    + OTHER_PROCESS
                )
        if len(rows) != len(second):
            calls = f"{len(second)} seeded hygiene calls {where}, {len(rows)} in this one"
            return f"{calls}: {OTHER_PROCESS}"
        return None

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def second_process(entry: Entry, seed: int) -> Iterator[SecondProcess]:
    """:class:`SecondProcess` for *entry*, stopped on the way out."""
    second = SecondProcess(entry, seed)
    try:
        yield second
    finally:
        second.stop()


@contextlib.contextmanager
def shared_process(names: list[str], seed: int, hash_seed: str) -> Iterator[dict[str, str]]:
    """One second process for the built-ins *names* of a run (one interpreter import instead of
    one per built-in), started with *hash_seed*; yields the environment that points the
    built-ins' workers to its answers (nothing if *names* is empty). Third-party plugins are
    not given it: each gets its own second process, loading only its distribution."""
    if not names:
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="dpplug-reproduction-") as directory:
        out = str(Path(directory) / "answers.json")
        builtins = Source("dpplug", "dpplug", "")
        process = _spawn(builtins, names, seed, hash_seed, out)
        try:
            yield {SHARED: out}
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
