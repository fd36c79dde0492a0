"""The ``dpplug`` command line: list, describe, sample and compare registered mechanisms.

Other packages add commands through the entry-point group ``dpplug.commands``: each entry point
is a function that receives the sub-command parsers and adds its own (the conformance package adds
``conform`` this way, so core never imports it). Bad arguments exit with status 2 and one line on
stderr (``dpplug: error: …``), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import warnings
from collections.abc import Sequence
from fractions import Fraction
from importlib import metadata
from typing import Any, NoReturn

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dpplug.catalog import LOAD_TIMEOUT, Catalog, example_instance, load_catalog
from dpplug.comparison import Task, canonical, compare_task, sweep_task
from dpplug.comparison_views import readme_section, replace_section, sweep_table, table
from dpplug.data import integer_scalar
from dpplug.errors import AccuracyWarning, BadParameter, DpplugError
from dpplug.kinds import KINDS, CountingQuerySampler
from dpplug.levels import recorded_level
from dpplug.param_text import params_text, parse_value
from dpplug.plugin_registry import Entry, Registry, Source
from dpplug.randomness import SeededSource, SystemSource

#: The entry-point group of commands added by other packages.
COMMANDS_GROUP = "dpplug.commands"


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit status 2. ``given`` holds the
    arguments being parsed, for hints."""

    given: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        hint = _param_hint(self.given) if message.startswith("unrecognized arguments") else ""
        self.exit(2, f"dpplug: error: {message}{hint} (see `{self.prog} --help`)\n")


def _param_hint(given: Sequence[str]) -> str:
    """A hint for ``--param KEY VALUE`` (a space where ``=`` belongs), the usual cause of a
    value left over."""
    for flag, key, value in zip(given, given[1:], given[2:], strict=False):
        if flag == "--param" and "=" not in key and not value.startswith("-"):
            return f"; --param takes KEY=VALUE as one word: --param {key}={value}"
    return ""


def _params(pairs: Sequence[str]) -> dict[str, object]:
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadParameter(
                f"--param expects KEY=VALUE, got {pair!r} (e.g. --param epsilon=0.5)"
            )
        params[key.strip()] = parse_value(value)
    return params


def _listing(catalog: Catalog) -> list[dict[str, Any]]:
    """Every listing row (:meth:`~dpplug.catalog.Catalog.rows`), each working mechanism's with
    the level its last conformance run recorded."""
    rows = catalog.rows()
    for row in rows:
        if row["kind"] is not None and row["status"] == "ok":
            source = Source(**row["source"])
            level = recorded_level(row["name"], source.describe(), source.distribution)
            row["level"] = level or "unchecked"
    return rows


def _registry_for(name: str) -> Registry:
    """A registry holding *name*: the built-ins, loaded without any third-party plugin, if it is
    one of theirs (their names cannot be taken); else :meth:`~dpplug.catalog.Catalog.registry_for`
    after listing every distribution in its own process."""
    builtins = Registry.load(entry_points=False)
    return builtins if name in builtins else load_catalog().registry_for(name)


def _cmd_list(args: argparse.Namespace, out: Console) -> None:
    if args.timeout <= 0:
        raise BadParameter(f"--timeout must be positive, got {args.timeout:g}")
    rows = _listing(load_catalog(args.timeout))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(
        title="dpplug mechanisms",
        caption="built-in unless listed below; `dpplug conform` (re)checks levels",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("name", no_wrap=True)
    table.add_column("guarantee", no_wrap=True)
    table.add_column("level")
    third_party: dict[str, list[str]] = {}
    for kind in [k.name for k in KINDS]:
        table.add_section()
        table.add_row(f"[bold]{kind}[/bold]")
        for row in rows:
            if row["kind"] != kind:
                continue
            form = {"pure": "ε", "approximate": "ε, δ"}.get(row["form"], "?")
            guarantee = f"{form}; {row['relation']}" if row["form"] else "?"
            level = row.get("level") or "-"
            if row["status"] != "ok":
                level = f"[red]broken[/red]: {escape(row['error'])}"
            table.add_row(f"  {escape(row['name'])}", guarantee, level)
            source = row["source"]
            if source["distribution"] != "dpplug":
                version = f"{source['distribution']} {source['version']}".strip()
                third_party.setdefault(version, []).append(row["name"])
    out.print(table)
    for version, names in third_party.items():
        out.print(f"from {version}: {', '.join(names)}", markup=False)
    for row in rows:
        if row["kind"] is None:
            claimed = f" (claimed {', '.join(row['claimed'])})" if row["claimed"] else ""
            source = Source(**row["source"]).describe()
            out.print(
                f"[red]broken plugin[/red] {escape(source)}{escape(claimed)}: "
                f"{escape(row['error'])}"
            )


def _description(entry: Entry, params: dict[str, object]) -> dict[str, Any]:
    cls = entry.cls
    example = example_instance(entry, params)
    info: dict[str, Any] = {
        "name": entry.name,
        "kind": entry.kind.name,
        "summary": cls.summary,
        "reference": cls.reference,
        "strict_time": cls.strict_time,
        "source": entry.source.describe(),
        "module": entry.module,
        "parameters": [p.as_dict() for p in cls.schema],
    }
    if example is not None:
        accuracy = example.accuracy(Fraction(1, 20))
        info["example"] = {
            "parameters": params_text(example.params),
            "derived": {k: str(v) for k, v in example.derived.items()},
            "guarantee": example.guarantee.as_dict(),
            "guarantee_text": example.guarantee.describe(),
            "accuracy_beta_1_20": accuracy.as_dict(),
        }
    return info


def _cmd_describe(args: argparse.Namespace, out: Console) -> None:
    params = _params(args.param)
    info = _description(_registry_for(args.name).get(args.name), params)
    if args.json:
        print(json.dumps(info, indent=2))
        return
    out.print(f"[bold]{escape(info['name'])}[/bold] ({info['kind']}) from {escape(info['source'])}")
    out.print(f"Defined in: {info['module']}", markup=False, highlight=False)
    out.print(info["summary"], markup=False, highlight=False)
    out.print(f"Implements: {info['reference']}", markup=False, highlight=False)
    out.print(f"Strict running time: {'yes' if info['strict_time'] else 'no (expected time)'}")
    out.print("Parameters:")
    for p in info["parameters"]:
        default = "required" if p["required"] else f"default {p['default']}"
        out.print(
            f"  {p['name']}: {p['type']} in {p['range']}, {default}", markup=False, highlight=False
        )
        for line in textwrap.wrap(p["doc"], max(out.width - 6, 20)):
            out.print(f"      {line}", markup=False, highlight=False)
    if "example" in info:
        ex = info["example"]
        given = ", ".join(f"{k}={v}" for k, v in ex["parameters"].items())
        out.print(f"With {given}:")
        out.print(f"  guarantee: {ex['guarantee_text']}")
        if ex["derived"]:
            out.print("  derived: " + ", ".join(f"{k}={v}" for k, v in ex["derived"].items()))
        acc = ex["accuracy_beta_1_20"]
        out.print(f"  accuracy at β = 1/20: a = {acc['per_query']['a']} ({acc['formula']})")


#: The most noisy counts one ``dpplug sample`` prints (each built-in draws 10⁶ in seconds).
MAX_SAMPLE_SIZE = 10**6
#: The most random bits one ``dpplug sample`` may draw for its randomness u ∈ [1, d]: a sampler
#: on the reference path M(c, U(d)) (geosample, fastsample) draws ⌈log₂ d⌉ bits per count, up
#: to 10⁸ at geosample's largest n (samplers with their own path draw a few words per count).
MAX_SAMPLE_BITS = 1 << 32


def _cmd_sample(args: argparse.Namespace, out: Console) -> None:
    if not 1 <= args.size <= MAX_SAMPLE_SIZE:
        raise BadParameter(f"--size must be in [1, {MAX_SAMPLE_SIZE}], got {args.size}")
    if args.seed is not None and args.seed < 0:
        raise BadParameter(f"--seed expects a non-negative integer seed, got {args.seed}")
    params = _params(args.param)
    mechanism = _registry_for(args.name).create(args.name, **params)
    if not isinstance(mechanism, CountingQuerySampler):
        raise BadParameter(
            f"{args.name} is a {mechanism.kind.name}, not a sampler; "
            "`dpplug list` shows the samplers"
        )
    reference = type(mechanism)._sample is CountingQuerySampler._sample  # draws u ∈ [1, d]
    per_count = (mechanism.d or 1).bit_length() if reference else 1
    if args.size * per_count > MAX_SAMPLE_BITS:
        raise BadParameter(
            f"{args.name} draws u in [1, d] with d of {per_count} bits per count, so --size "
            f"{args.size} needs {args.size * per_count} random bits, more than the "
            f"{MAX_SAMPLE_BITS} one command may draw: ask for at most "
            f"{MAX_SAMPLE_BITS // per_count} counts, or use a smaller n"
        )
    source = SystemSource() if args.seed is None else SeededSource(args.seed)
    count = integer_scalar(args.count, *mechanism.count_bounds, f"--count for {args.name}")
    noisy = mechanism.sample(np.full(args.size, count, dtype=np.int64), source)
    if args.json:
        print(
            json.dumps(
                {
                    "name": args.name,
                    "parameters": params_text(mechanism.params),
                    "guarantee": mechanism.guarantee.as_dict(),
                    "count": args.count,
                    "seed": args.seed,
                    "samples": [int(v) for v in noisy],
                }
            )
        )
    else:
        print(" ".join(str(int(v)) for v in noisy))


def _cmd_compare(args: argparse.Namespace, out: Console) -> None:
    if args.readme:
        section = readme_section()
        if args.write:
            replace_section(args.write, section)
        else:
            print(section)
        return
    if args.kind is None:
        raise BadParameter("name a kind to compare (e.g. partition-selector), or pass --readme")
    params = _params([*args.params, *args.param])
    if args.sweep is not None:
        name, sep, bounds = args.sweep.partition("=")
        low, colon, high = bounds.partition(":")
        if not sep or not colon or not name:
            raise BadParameter(f"--sweep expects NAME=LOW:HIGH, got {args.sweep!r}")
        params.pop(canonical(name), None)
        params.pop(name, None)
        task = Task.of(args.kind, params)
        swept = sweep_task(task, canonical(name), parse_value(low), parse_value(high), args.points)
        print(json.dumps(swept.as_dict(), indent=2) if args.json else sweep_table(swept))
        return
    ranking = compare_task(Task.of(args.kind, params), args.only)
    print(json.dumps(ranking.as_dict(), indent=2) if args.json else table(ranking))


def _parser() -> Parser:
    parser = Parser(
        prog="dpplug",
        description=(
            "The dpplug command line: list, describe, sample and compare registered mechanisms."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    listing = commands.add_parser("list", help="every registered plugin and its status")
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.add_argument(
        "--timeout",
        type=float,
        default=LOAD_TIMEOUT,
        metavar="SECONDS",
        help="time limit of loading one distribution's plugins, each in its own process "
        f"(default {LOAD_TIMEOUT:g})",
    )
    listing.set_defaults(run=_cmd_list)
    describe = commands.add_parser("describe", help="parameters, guarantee and accuracy of NAME")
    describe.add_argument("name")
    describe.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="describe these parameters instead of the example case",
    )
    describe.add_argument("--json", action="store_true")
    describe.set_defaults(run=_cmd_describe)
    sample = commands.add_parser("sample", help="draw noisy counts from a sampler")
    sample.add_argument("name")
    sample.add_argument("--count", type=int, required=True, help="the true count")
    sample.add_argument("--size", type=int, default=1, help="how many noisy counts (default 1)")
    sample.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a mechanism parameter, e.g. --param epsilon=0.5 (repeatable)",
    )
    sample.add_argument(
        "--seed",
        type=int,
        default=None,
        help="reproducible seeded source (tests only; default: OS CSPRNG)",
    )
    sample.add_argument("--json", action="store_true")
    sample.set_defaults(run=_cmd_sample)
    comparing = commands.add_parser(
        "compare",
        help="rank the mechanisms of a kind for public parameters (which mechanism to use)",
        description=(
            "Build every registered mechanism of KIND that accepts the public parameters and "
            "rank them by the accuracy each declares at beta (default 1/20). Reads public "
            "parameters only. Aliases: l0 (max_partitions_contributed), k (max_queries), "
            "m (sparsity)."
        ),
    )
    comparing.add_argument("kind", nargs="?", help="e.g. partition-selector (see `dpplug list`)")
    comparing.add_argument(
        "params", nargs="*", metavar="KEY=VALUE", help="public parameters, e.g. epsilon=1 l0=10"
    )
    comparing.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="a public parameter"
    )
    comparing.add_argument(
        "--only", action="append", default=None, metavar="NAME", help="compare only NAME"
    )
    comparing.add_argument(
        "--sweep", metavar="NAME=LOW:HIGH", help="rank along one parameter, with crossovers"
    )
    comparing.add_argument("--points", type=int, default=9, help="values of a sweep (default 9)")
    comparing.add_argument("--json", action="store_true")
    comparing.add_argument(
        "--readme", action="store_true", help='print the README\'s "Which mechanism?" section'
    )
    comparing.add_argument(
        "--write", metavar="PATH", help="with --readme: replace that section in PATH"
    )
    comparing.set_defaults(run=_cmd_compare)
    parser.add_argument("--version", action="version", version=f"dpplug {_version()}")
    for command in metadata.entry_points(group=COMMANDS_GROUP):
        command.load()(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpplug`` command; returns the exit status."""
    parser = _parser()
    parser.given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = args.run(args, Console())
    except DpplugError as exc:
        print(f"dpplug: error: {exc}", file=sys.stderr)
        return 2
    return int(status or 0)


def _version() -> str:
    try:
        return metadata.version("dpplug")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _show_warning(
    message: Warning | str, category: type[Warning], *_: object, **__: object
) -> None:
    """A warning as one line on stderr, like errors: dpplug's own by their text, others (from a
    plugin or a library) with their category."""
    prefix = "" if issubclass(category, AccuracyWarning) else f"{category.__name__}: "
    print(f"dpplug: warning: {prefix}{message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
