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
import warnings
from collections.abc import Sequence
from fractions import Fraction
from importlib import metadata
from typing import Any, NoReturn

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from dpplug.comparison import Task, canonical, compare_task, sweep_task
from dpplug.comparison_views import readme_section, replace_section, sweep_table, table
from dpplug.data import integer_scalar
from dpplug.errors import AccuracyWarning, BadParameter, DpplugError
from dpplug.kinds import KINDS, CountingQuerySampler
from dpplug.levels import recorded_level
from dpplug.mechanism import Mechanism
from dpplug.param_text import param_text, parse_value
from dpplug.plugin_registry import Entry, Registry, registry
from dpplug.randomness import SeededSource, SystemSource

#: The entry-point group of commands added by other packages.
COMMANDS_GROUP = "dpplug.commands"


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"dpplug: error: {message} (see `{self.prog} --help`)\n")


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


def _example(entry: Entry, params: dict[str, object]) -> Mechanism | None:
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


def _listing(reg: Registry) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for entry in reg:
        source = {
            "distribution": entry.source.distribution,
            "version": entry.source.version,
            "plugin": entry.source.plugin,
        }
        row: dict[str, Any] = {
            "name": entry.name,
            "kind": entry.kind.name,
            "source": source,
            "module": entry.module,
        }
        try:
            example = _example(entry, {})
            guarantee = example.guarantee if example is not None else None
            form = guarantee.form if guarantee else None
            relation = guarantee.neighbouring.relation.value if guarantee else None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plugin whose example or guarantee breaks
            error = str(exc) if isinstance(exc, DpplugError) else f"{type(exc).__name__}: {exc}"
            row.update(status="broken", error=error, form=None, relation=None)
        else:
            level = recorded_level(entry.name, entry.source.describe(), entry.module) or "unchecked"
            row.update(status="ok", form=form, relation=relation, level=level)
        rows.append(row)
    for broken in reg.broken:
        rows.append(
            {
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
            }
        )
    return rows


def _cmd_list(args: argparse.Namespace, out: Console) -> None:
    rows = _listing(registry())
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
                level = f"[red]broken[/red]: {row['error']}"
            table.add_row(f"  {row['name']}", guarantee, level)
            source = row["source"]
            if source["distribution"] != "dpplug":
                version = f"{source['distribution']} {source['version']}".strip()
                third_party.setdefault(version, []).append(row["name"])
    out.print(table)
    for version, names in third_party.items():
        out.print(f"from {version}: {', '.join(names)}")
    for row in rows:
        if row["kind"] is None:
            out.print(f"[red]broken plugin[/red] {row['name']}: {row['error']}")


def _description(entry: Entry, params: dict[str, object]) -> dict[str, Any]:
    cls = entry.cls
    example = _example(entry, params)
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
            "parameters": {k: param_text(v) for k, v in example.params.items() if v is not None},
            "derived": {k: str(v) for k, v in example.derived.items()},
            "guarantee": example.guarantee.as_dict(),
            "guarantee_text": example.guarantee.describe(),
            "accuracy_beta_1_20": accuracy.as_dict(),
        }
    return info


def _cmd_describe(args: argparse.Namespace, out: Console) -> None:
    info = _description(registry().get(args.name), _params(args.param))
    if args.json:
        print(json.dumps(info, indent=2))
        return
    out.print(f"[bold]{info['name']}[/bold] ({info['kind']}) from {info['source']}")
    out.print(f"Defined in: {info['module']}")
    out.print(info["summary"])
    out.print(f"Implements: {info['reference']}")
    out.print(f"Strict running time: {'yes' if info['strict_time'] else 'no (expected time)'}")
    table = Table(title="parameters")
    for column in ("name", "type", "range", "default", "meaning"):
        table.add_column(column)
    for p in info["parameters"]:
        default = "required" if p["required"] else str(p["default"])
        table.add_row(p["name"], p["type"], p["range"], default, p["doc"])
    out.print(table)
    if "example" in info:
        ex = info["example"]
        given = ", ".join(f"{k}={v}" for k, v in ex["parameters"].items())
        out.print(f"With {given}:")
        out.print(f"  guarantee: {ex['guarantee_text']}")
        if ex["derived"]:
            out.print("  derived: " + ", ".join(f"{k}={v}" for k, v in ex["derived"].items()))
        acc = ex["accuracy_beta_1_20"]
        out.print(f"  accuracy at β = 1/20: a = {acc['per_query']['a']} ({acc['formula']})")


#: The most noisy counts one ``dpplug sample`` prints.
MAX_SAMPLE_SIZE = 10**7


def _cmd_sample(args: argparse.Namespace, out: Console) -> None:
    if not 1 <= args.size <= MAX_SAMPLE_SIZE:
        raise BadParameter(f"--size must be in [1, {MAX_SAMPLE_SIZE}], got {args.size}")
    mechanism = registry().create(args.name, **_params(args.param))
    if not isinstance(mechanism, CountingQuerySampler):
        raise BadParameter(
            f"{args.name} is a {mechanism.kind.name}, not a sampler; "
            "`dpplug list` shows the samplers"
        )
    source = SystemSource() if args.seed is None else SeededSource(args.seed)
    count = integer_scalar(args.count, *mechanism.count_bounds, f"--count for {args.name}")
    noisy = mechanism.sample(np.full(args.size, count, dtype=np.int64), source)
    if args.json:
        print(
            json.dumps(
                {
                    "name": args.name,
                    "parameters": {
                        k: param_text(v) for k, v in mechanism.params.items() if v is not None
                    },
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


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dpplug",
        description=(
            "The dpplug command line: list, describe, sample and compare registered mechanisms."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    listing = commands.add_parser("list", help="every registered plugin and its status")
    listing.add_argument("--json", action="store_true", help="print a JSON array")
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
    for command in metadata.entry_points(group=COMMANDS_GROUP):
        command.load()(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpplug`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = args.run(args, Console())
    except DpplugError as exc:
        print(f"dpplug: error: {exc}", file=sys.stderr)
        return 2
    return int(status or 0)


def _show_warning(
    message: Warning | str, category: type[Warning], *_: object, **__: object
) -> None:
    """A warning as one line on stderr, like errors: dpplug's own by their text, others (from a
    plugin or a library) with their category."""
    prefix = "" if issubclass(category, AccuracyWarning) else f"{category.__name__}: "
    print(f"dpplug: warning: {prefix}{message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
