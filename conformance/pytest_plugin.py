"""pytest plugin (entry point ``pytest11``): ``pytest --dpplug`` runs the conformance contracts on
every registered plugin, one test item per plugin × contract, so a third party's CI checks its
mechanisms with one line. ``--dpplug-plugin NAME`` (repeatable) restricts the run;
``--dpplug-mode fast|default|full`` and ``--dpplug-seed S`` set the statistical tests' sizes and
seed. A plugin that failed to load becomes a failing item that shows its error, whichever
plugins are named, unless ``--dpplug-allow-broken`` is given. ``--dpplug-require LEVEL`` adds
one item per plugin, after its contracts, that fails unless the level those contracts earned
(with the surface × dimension cells its kind requires) reaches LEVEL, as ``dpplug conform
--require LEVEL`` does: a plugin whose exact contracts were skipped is not exactly verified.

pytest loads this module in every session on a machine with dpplug installed, so it imports
nothing but pytest at start-up: the registry, the contracts and their dependencies (numpy, scipy,
hypothesis) are imported only when ``--dpplug`` is given. The plugin is pytest's only in the
environment dpplug is installed in: run ``python -m pytest --dpplug`` there (``pip install
"dpplug[test]"`` brings pytest), since another pytest on the PATH does not know ``--dpplug``.
A name no plugin has is a usage error of one line, with the names it may have meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from dpplug.conformance.requirement import REQUIRABLE, falls_short

if TYPE_CHECKING:
    from dpplug.conformance.results import ContractResult
    from dpplug.conformance.settings import Settings
    from dpplug.plugin_registry import BrokenPlugin, Entry


class ContractFailure(Exception):
    """A plugin failed a conformance contract."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpplug", "dpplug conformance contracts")
    group.addoption("--dpplug", action="store_true", help="run the dpplug conformance contracts")
    group.addoption(
        "--dpplug-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="check only this plugin (repeatable; default: every registered one)",
    )
    group.addoption(
        "--dpplug-mode",
        choices=("fast", "default", "full"),
        default="default",
        help="sample sizes of the statistical contracts",
    )
    group.addoption("--dpplug-seed", type=int, default=0, help="seed of the statistical contracts")
    group.addoption(
        "--dpplug-require",
        choices=REQUIRABLE,
        default=None,
        metavar="LEVEL",
        help='fail every plugin below LEVEL (declared, audited or "exactly verified")',
    )
    group.addoption(
        "--dpplug-allow-broken",
        action="store_true",
        help="do not fail on plugins that could not be loaded",
    )


#: Each plugin's contract results of this session, for its level item.
RESULTS: pytest.StashKey[dict[str, list[ContractResult]]] = pytest.StashKey()


class ContractItem(pytest.Item):
    """One contract on one plugin."""

    def __init__(self, *, entry: Entry, contract: str, settings: Settings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry, self.contract, self.settings = entry, contract, settings

    def runtest(self) -> None:
        from dpplug.conformance.results import Outcome
        from dpplug.conformance.runner import run_contract

        result = run_contract(self.entry, self.contract, self.settings)
        self.config.stash.setdefault(RESULTS, {}).setdefault(self.entry.name, []).append(result)
        if result.outcome is Outcome.SKIPPED:
            pytest.skip(result.detail)
        if result.outcome is Outcome.FAILED:
            raise ContractFailure(result.detail)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ContractFailure):
            return f"{self.entry.name} fails {self.contract}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (self.entry.source.describe(), None, self.name)


class LevelItem(pytest.Item):
    """The level one plugin's contracts of this session earned, against ``--dpplug-require``."""

    def __init__(self, *, entry: Entry, required: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry, self.required = entry, required

    def runtest(self) -> None:
        from dpplug.conformance.results import PluginResult
        from dpplug.conformance.runner import CONTRACTS, required_of

        results = self.config.stash.get(RESULTS, {}).get(self.entry.name, [])
        ran = {result.contract for result in results}
        result = PluginResult(
            self.entry.name,
            self.entry.kind.name,
            self.entry.source.describe(),
            tuple(results),
            required=required_of(self.entry),
        )
        level = result.level.value
        if falls_short(level, self.required):
            missing = [contract for contract in CONTRACTS if contract not in ran]
            why = [f"contracts not run in this session: {', '.join(missing)}"] if missing else []
            if result.uncovered:
                cells = ", ".join(
                    f"{surface} × {dimension}" for surface, dimension in result.uncovered
                )
                why.append(f"cells no contract covered: {cells}")
            skipped = [r.contract for r in results if r.outcome.value == "skipped"]
            if skipped:
                why.append(f"skipped: {', '.join(skipped)}")
            raise ContractFailure(
                f"level {level}, below the required {self.required}"
                + (f" ({'; '.join(why)})" if why else "")
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ContractFailure):
            return f"{self.entry.name}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (self.entry.source.describe(), None, self.name)


class BrokenPluginItem(pytest.Item):
    """A plugin that could not be loaded."""

    def __init__(self, *, broken: BrokenPlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.broken = broken

    def runtest(self) -> None:
        raise ContractFailure(self.broken.error)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return f"plugin {self.broken.source.describe()} is broken: {excinfo.value}"

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (self.broken.source.describe(), None, self.name)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--dpplug"):
        return
    from dpplug.conformance.runner import CONTRACTS
    from dpplug.conformance.settings import Settings
    from dpplug.errors import DpplugError
    from dpplug.plugin_registry import registry

    settings = Settings(
        mode=config.getoption("--dpplug-mode"), seed=config.getoption("--dpplug-seed")
    )
    if settings.seed < 0:
        raise pytest.UsageError(
            f"--dpplug-seed must be a non-negative integer, got {settings.seed}"
        )
    reg = registry()
    names = config.getoption("--dpplug-plugin")
    try:
        entries = [reg.get(name) for name in names] if names else reg.entries()
    except DpplugError as exc:  # a mistyped name: one line, as the command line says it
        raise pytest.UsageError(f"--dpplug-plugin: {exc}") from None
    required = config.getoption("--dpplug-require")
    added: list[pytest.Item] = []
    for entry in entries:
        added += [
            ContractItem.from_parent(
                session,
                name=f"dpplug[{entry.name}][{contract}]",
                entry=entry,
                contract=contract,
                settings=settings,
            )
            for contract in CONTRACTS
        ]
        if required is not None:
            added.append(
                LevelItem.from_parent(
                    session, name=f"dpplug[{entry.name}][level]", entry=entry, required=required
                )
            )
    if not config.getoption("--dpplug-allow-broken"):
        added += [  # even when --dpplug-plugin names others: CI must fail loudly
            BrokenPluginItem.from_parent(
                session, name=f"dpplug[broken:{broken.source.plugin}]", broken=broken
            )
            for broken in reg.broken
        ]
    items += added
    # Reported as collected, so that the count pytest prints (--collect-only included) has them.
    config.hook.pytest_collectreport(
        report=pytest.CollectReport(session.nodeid, "passed", None, list(added))
    )
