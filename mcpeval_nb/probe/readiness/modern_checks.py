"""The protocol checks of ``mcpeval-modern/1``: what the stateless 2026-07-28 revision requires.

Run on the battery's connection (``checks.Connection``) after the tool calls, in
``labels.MODERN_PROTOCOL_CHECKS`` order, each applicable check reduced to a reason label or None:

- ``protocol.discover``: ``server/discover`` (a MUST) names 2026-07-28 in ``supportedVersions`` and
  carries a ``capabilities`` object (its ``resultType`` and cache hints count in the two checks below;
  a missing ``serverInfo``, a SHOULD, is a ``guidance`` finding);
- ``protocol.unknown-method``: -32601, with HTTP status 404 over HTTP (the revision pins it);
- ``protocol.unknown-tool``, ``protocol.pagination``, ``protocol.surfaces`` (resources or prompts
  declared): as in ``mcpeval-standard/2``;
- ``protocol.unknown-resource`` (resources declared): ``resources/read`` of an unknown URI is -32602;
- ``protocol.version-refusal``: a request at ``2000-01-01`` is refused with -32022 whose
  ``data.supported`` names 2026-07-28 and whose ``data.requested`` echoes ``2000-01-01`` (both required
  by the schema);
- ``protocol.headers`` (HTTP only): a request whose ``Mcp-Method`` header disagrees with its body is
  refused with HTTP 400 and -32020 (the version refusal is a 400 over HTTP as well);
- ``protocol.result-type`` and ``protocol.cache-hints``: every result the battery read carried
  ``resultType``; every list, read and discover result carried ``ttlMs`` >= 0 and a ``cacheScope``;
- ``protocol.tools-order``: a second ``tools/list`` walk lists the same names in the same order;
- ``protocol.input-required`` (only when a call answered ``input_required``): input requests only for
  declared capabilities (the battery declares none), each well formed;
- ``protocol.tasks`` (the server declares the tasks extension): ``tasks/get`` of an unknown id is an
  error, and every task the battery's calls received reached a terminal status within the call's
  deadline (the battery declares the extension to a server that advertises it, so a server may answer
  any call with a task).

Never scored here, because the revision removed them: ``ping``, ``logging/setLevel``, roots, the
initialize negotiation.  Nothing a server sends is kept: each check keeps its label.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...errors import TransportError
from ...limits import MAX_SERVER_REQUESTS
from ...transport.era import (
    HEADER_MISMATCH,
    META_VERSION,
    MODERN_VERSION,
    UNSUPPORTED_VERSION,
    supported_versions,
)
from ...transport.messages import HttpTarget, Response
from ...transport.modern import Observed
from .checks import BOGUS_VERSION, UNKNOWN_METHOD, Connection, run_protocol_checks, shared_checks
from .labels import MODERN_PROTOCOL_CHECKS

__all__ = ["ModernFacts", "modern_protocol_checks"]

UNKNOWN_RESOURCE = "mcpeval://unknown-resource"
UNKNOWN_TASK = "mcpeval-unknown-task"


@dataclass(frozen=True)
class ModernFacts:
    """What the battery knew before its protocol checks.

    Attributes:
        names: the listed tool names, in listing order.
        surfaces: resources or prompts were declared. resources: resources were declared.
        tasks: the server declared the tasks extension.
    """

    names: tuple[str, ...]
    surfaces: bool
    resources: bool
    tasks: bool


def _discover(conn: Connection) -> str | None:
    result = conn.session.request("server/discover", {}).result
    if not isinstance(result, dict):
        return "protocol-discover-incomplete"
    complete = (MODERN_VERSION in (supported_versions({"supported": result.get("supportedVersions")}) or ())
                and isinstance(result.get("capabilities"), dict))
    return None if complete else "protocol-discover-incomplete"


def _status_ok(conn: Connection, expected: int) -> bool:
    """On HTTP the revision pins the status of its errors; elsewhere there is none to check."""
    status = conn.session.last_http_status
    return status is None or status == expected


def _unknown_method(conn: Connection) -> str | None:
    response = conn.session.request(UNKNOWN_METHOD)
    ok = response.error is not None and response.error.code == -32601 and _status_ok(conn, 404)
    return None if ok else "protocol-unknown-method-answered"


def _unknown_resource(conn: Connection) -> str | None:
    response = conn.session.request("resources/read", {"uri": UNKNOWN_RESOURCE},
                                    max_server_requests=MAX_SERVER_REQUESTS)
    ok = response.error is not None and response.error.code == -32602
    return None if ok else "protocol-unknown-resource-code"


def _refused(ask: Callable[[], Response]) -> Response | None:
    """The response, or None when a modern HTTP endpoint refused without a JSON-RPC error body."""
    try:
        return ask()
    except TransportError as exc:
        if getattr(exc, "keeps_session", False):
            return None
        raise


def _version_refusal(conn: Connection) -> str | None:
    session = conn.session
    response = _refused(lambda: session.request("tools/list", None, meta={META_VERSION: BOGUS_VERSION},
                                                headers={"MCP-Protocol-Version": BOGUS_VERSION}))
    if response is not None and response.error is None:
        return "protocol-version-accepted"
    error = None if response is None else response.error
    named = None if error is None else supported_versions(error.data)
    data = None if error is None else error.data
    echoed = isinstance(data, dict) and data.get("requested") == BOGUS_VERSION
    if error is None or error.code != UNSUPPORTED_VERSION or not named or MODERN_VERSION not in named:
        return "protocol-version-refusal-invalid"
    return None if echoed and _status_ok(conn, 400) else "protocol-version-refusal-invalid"


def _headers(conn: Connection) -> str | None:
    session = conn.session
    response = _refused(lambda: session.request("tools/list", None, headers={"Mcp-Method": "tools/call"}))
    ok = (response is not None and response.error is not None and response.error.code == HEADER_MISMATCH
          and _status_ok(conn, 400))
    return None if ok else "protocol-header-mismatch-accepted"


def _tools_order(conn: Connection, names: tuple[str, ...]) -> str | None:
    first, second = (tuple(conn.session.list_tools().names) for _ in range(2))
    return None if first == second == names else "protocol-tools-order-unstable"


def _tasks(conn: Connection) -> str | None:
    """An unknown task id is refused, and every task the battery's calls received reached an end."""
    unknown = conn.session.request("tasks/get", {"taskId": UNKNOWN_TASK})
    seen = conn.observed()
    broken = unknown.error is None or seen.task_errors > 0 or seen.tasks != seen.tasks_finished
    return "protocol-task-lifecycle-broken" if broken else None


def _seen_checks(seen: Observed) -> list[tuple[str, str | None]]:
    hinted = seen.lists > 0 and seen.unhinted == 0
    return [("protocol.result-type", None if seen.untyped == 0 else "protocol-result-type-missing"),
            ("protocol.cache-hints", None if hinted else "protocol-cache-hints-missing")]


def _input_required(seen: Observed) -> str | None:
    if seen.input_undeclared:
        return "protocol-input-undeclared"
    return "protocol-input-malformed" if seen.input_malformed else None


def modern_protocol_checks(conn: Connection, facts: ModernFacts) -> tuple[tuple[str, str | None], ...]:
    """Run the ``mcpeval-modern/1`` protocol checks; (check id, reason or None) for each applicable one.

    Raises:
        TransportError: only ``evaluation-budget-exceeded``.
    """
    checks: list[tuple[str, Callable[[Connection], str | None]]] = [("protocol.discover", _discover)]
    checks += [(cid, _unknown_method if cid == "protocol.unknown-method" else check)
               for cid, check in shared_checks(surfaces_declared=facts.surfaces)]
    if facts.resources:
        checks.append(("protocol.unknown-resource", _unknown_resource))
    checks.append(("protocol.version-refusal", _version_refusal))
    if isinstance(conn.ctx.target, HttpTarget):
        checks.append(("protocol.headers", _headers))
    checks.append(("protocol.tools-order", lambda c: _tools_order(c, facts.names)))
    if facts.tasks:
        checks.append(("protocol.tasks", _tasks))
    out = list(run_protocol_checks(conn, checks))
    seen = conn.observed()
    out += _seen_checks(seen)
    if seen.input_rounds or seen.input_malformed:
        out.append(("protocol.input-required", _input_required(seen)))
    order = {cid: i for i, cid in enumerate(MODERN_PROTOCOL_CHECKS)}
    return tuple(sorted(out, key=lambda item: order[item[0]]))
