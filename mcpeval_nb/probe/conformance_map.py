"""The readiness checks this package shares with the official conformance suite, and their agreement.

Each row names one of our protocol checks, the suite's scenario and check ids that judge the same
requirement, and the protocol revision both run at (``--protocol`` / ``--spec-version``).  Our check
passes when the readiness lists no loss for it; the suite's passes when every mapped check is
``SUCCESS`` (``FAILURE`` or ``WARNING`` fails; ``SKIPPED`` or absent gives no verdict).  ``agreement``
pairs the two for one server; ``tests/e2e/test_conformance_agreement.py`` requires every pair to agree on
the suite's reference servers, the official SDK's servers, ``serve`` and a fixture with faults.
A row compares only where our check applies to the server (``protocol.unknown-resource`` needs the
resources capability; ``agreement`` takes the declared capabilities; ``protocol.headers`` needs HTTP, which
the suite's server scenarios always speak).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .conformance import SuiteScenario
from .readiness.labels import MODERN_STANDARD, STANDARD
from .readiness.model import Readiness

__all__ = ["ERA_CHECKS", "SHARED_CHECKS", "Agreement", "SharedCheck", "agreement", "era_agreement",
           "suite_scenarios"]


@dataclass(frozen=True)
class SharedCheck:
    """One requirement both tools judge.

    Attributes:
        check: our readiness check id. standard: the standard it belongs to.
        spec_version: the suite's ``--spec-version`` (the revision the run speaks).
        scenario: the suite's scenario. suite_checks: its check ids that must all succeed.
        needs: the server capability our check needs to apply (None: always applies).
    """

    check: str
    standard: str
    spec_version: str
    scenario: str
    suite_checks: tuple[str, ...]
    needs: str | None = None


MODERN, LEGACY = "2026-07-28", "2025-11-25"

#: Every shared requirement (docs/conformance.md prints this table).
SHARED_CHECKS: tuple[SharedCheck, ...] = (
    SharedCheck("protocol.discover", MODERN_STANDARD, MODERN, "server-stateless",
                ("sep-2575-server-implements-discover",)),
    SharedCheck("protocol.unknown-method", MODERN_STANDARD, MODERN, "server-stateless",
                ("sep-2575-http-server-method-not-found-404",)),
    SharedCheck("protocol.version-refusal", MODERN_STANDARD, MODERN, "server-stateless",
                ("sep-2575-server-unsupported-version-error",)),
    SharedCheck("protocol.headers", MODERN_STANDARD, MODERN, "http-header-validation",
                ("sep-2243-server-reject-error-code",)),
    SharedCheck("protocol.unknown-resource", MODERN_STANDARD, MODERN, "sep-2164-resource-not-found",
                ("sep-2164-error-code",), needs="resources"),
    SharedCheck("protocol.tools-order", MODERN_STANDARD, MODERN, "tools-list",
                ("tools-list-deterministic-order",)),
    SharedCheck("protocol.cache-hints", MODERN_STANDARD, MODERN, "caching",
                ("sep-2549-tools-list-caching-hints", "sep-2549-ttl-non-negative",
                 "sep-2549-cache-scope-valid")),
    SharedCheck("protocol.pagination", MODERN_STANDARD, MODERN, "tools-list", ("tools-list",)),
    SharedCheck("protocol.ping", STANDARD, LEGACY, "ping", ("ping",)),
    SharedCheck("protocol.pagination", STANDARD, LEGACY, "tools-list", ("tools-list",)),
)

#: Whether a server serves each era (the era matrix's ``serves``, ``compare --eras``) against the suite's
#: check of that era's entry point: the ``initialize`` handshake at 2025-11-25, ``server/discover`` at
#: 2026-07-28.
ERA_CHECKS: tuple[SharedCheck, ...] = (
    SharedCheck("serves.legacy", "era-matrix", LEGACY, "server-initialize", ("server-initialize",)),
    SharedCheck("serves.modern", "era-matrix", MODERN, "server-stateless",
                ("sep-2575-server-implements-discover",)),
)


@dataclass(frozen=True)
class Agreement:
    """One shared requirement on one server: our verdict and the suite's (True: passes)."""

    shared: SharedCheck
    ours: bool
    suite: bool

    @property
    def agrees(self) -> bool:
        """Both tools give the same verdict."""
        return self.ours == self.suite


def suite_scenarios(spec_version: str) -> tuple[str, ...]:
    """The suite scenarios the shared checks need at ``spec_version``, in table order."""
    return tuple(dict.fromkeys(s.scenario for s in SHARED_CHECKS if s.spec_version == spec_version))


def _suite_verdict(shared: SharedCheck, results: Sequence[SuiteScenario]) -> bool | None:
    scenario = next((s for s in results if s.mode == "server" and s.scenario == shared.scenario), None)
    if scenario is None:
        return None
    statuses = [scenario.status(cid) for cid in shared.suite_checks]
    if any(s in ("FAILURE", "WARNING") for s in statuses):
        return False
    return True if statuses and all(s == "SUCCESS" for s in statuses) else None


def agreement(readiness: Readiness, results: Sequence[SuiteScenario], *,
              capabilities: Collection[str] = ()) -> tuple[Agreement, ...]:
    """Pair our verdicts with the suite's on every shared requirement both judged.

    Args:
        readiness: our readiness for the server (its standard selects the rows).
        results: the suite's results for the same server at the matching ``--spec-version``.
        capabilities: the server's declared capability names (``Guidance.capabilities``): a row whose
            check needs one the server did not declare is not compared (our check did not run).

    Returns:
        One agreement per shared requirement of the readiness's standard that applies to the server and
        that the suite gave a verdict on.
    """
    lost = {c.id for c in readiness.area("protocol").checks}
    out = []
    for shared in SHARED_CHECKS:
        if shared.standard != readiness.standard or (shared.needs and shared.needs not in capabilities):
            continue
        suite = _suite_verdict(shared, results)
        if suite is not None:
            out.append(Agreement(shared, shared.check not in lost, suite))
    return tuple(out)


def era_agreement(serves: Mapping[str, bool], results: Sequence[SuiteScenario]) -> tuple[Agreement, ...]:
    """Pair the era matrix's verdicts (``EraMatrix.serves``: ``legacy``, ``modern``) with the suite's.

    Args:
        serves: which eras the matrix found served.
        results: the suite's results for the same server: ``server-initialize`` run at 2025-11-25 and
            ``server-stateless`` at 2026-07-28 (one directory or both).

    Returns:
        One agreement per era the suite gave a verdict on (``ERA_CHECKS``).
    """
    out = []
    for shared in ERA_CHECKS:
        suite = _suite_verdict(shared, results)
        era = shared.check.removeprefix("serves.")
        if suite is not None and era in serves:
            out.append(Agreement(shared, serves[era], suite))
    return tuple(out)
