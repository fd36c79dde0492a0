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
import warnings
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

import numpy as np

from dpplug.conformance.probes import probes
from dpplug.conformance.probes.base import Call, Probe
from dpplug.plugin_registry import Entry, Registry, Source
from dpplug.randomness import SeededSource

#: Seconds the second process may take (it imports dpplug and makes a few small calls).
TIMEOUT = 300
#: Values of ``PYTHONHASHSEED`` (0 to 2³² − 1).
HASH_SEEDS = 1 << 32
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
    return Registry.load(entry_points=_of(distribution))


def _of(distribution: str) -> Callable[[metadata.EntryPoint], bool]:
    return lambda ep: ep.dist is not None and ep.dist.name == distribution


class Unavailable(Exception):
    """The second process cannot load the plugin (a plugin object registered at run time that is
    not an importable module)."""


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
    """The second process: :func:`seeded_outputs` of the requested plugin, as one JSON line on
    standard output (what the plugin prints goes to standard error)."""
    answer_to, sys.stdout = sys.stdout, sys.stderr
    try:
        source = Source(request["plugin"], request["distribution"], request["version"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry = _registry(source).get(request["name"])
            answer: dict[str, Any] = {"rows": seeded_outputs(entry, request["seed"])}
    except Unavailable as exc:
        answer = {"unavailable": str(exc)}
    except BaseException as exc:  # whatever the plugin raises there is the answer
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    answer_to.write(json.dumps(answer) + "\n")
    answer_to.flush()


def other_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` other than this process's: the next value if it was started with
    one, else 0 (a randomised process's hash key is 0 with probability 2⁻¹²⁸)."""
    own = os.environ.get("PYTHONHASHSEED", "")
    return str((int(own) + 1) % HASH_SEEDS) if own.isdecimal() else "0"


class SecondProcess:
    """The second process for one plugin, running while the first checks (see the module
    docstring); :meth:`problem` compares its answer with the first process's rows."""

    def __init__(self, entry: Entry, seed: int) -> None:
        self.hash_seed = other_hash_seed()
        source = entry.source
        request = {
            "path": sys.path,
            "plugin": source.plugin,
            "distribution": source.distribution,
            "version": source.version,
            "name": entry.name,
            "seed": seed,
        }
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, json.dumps(request)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": self.hash_seed},
            text=True,
        )
        self.unavailable: str | None = None

    def problem(self, rows: list[Row]) -> str | None:
        """Where the second process's outputs differ from *rows* (``None``: they do not, or it
        cannot load the plugin, which :attr:`unavailable` then says)."""
        where = f"in a second process (PYTHONHASHSEED={self.hash_seed}, a fresh import)"
        try:
            out, _ = self.process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"the seeded hygiene calls did not finish {where} within {TIMEOUT} s"
        lines = out.strip().splitlines()
        try:
            answer = json.loads(lines[-1])
        except (IndexError, ValueError):
            code = self.process.returncode
            return f"the seeded hygiene calls gave no result {where} (exit code {code})"
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
