"""A raw 2026-07-28 fixture server with switchable faults, for the ``mcpeval-modern/1`` checks.

Usage: ``python -m mcpeval_nb.testing.servers.modern_faults [--http] [fault ...]``.  Without faults it is
a correct modern-only server: ``server/discover`` (with the tasks extension and resources declared),
results with ``resultType`` and cache hints, ``tools/list`` in a fixed order, -32022 naming 2026-07-28
for any other version (and for ``initialize``), -32602 for an unknown resource or task, -32020 when an
HTTP request's ``Mcp-Method`` header disagrees with its body.  Tools (read-only): ``lookup(city)`` and
``read_counter()`` (plain; the second named as the demo fixture's finding names it), ``confirm(item)``
(an input-required round, only when the client declared elicitation; a tool error otherwise), ``job()``
(a task to a client that declares the tasks extension; completed at its first poll).

Faults: ``no-result-type``, ``no-cache``, ``shuffle`` (tools/list order changes per call),
``old-resource-code`` (-32002), ``accept-version`` (any version answered), ``no-header-check``,
``nag`` (``confirm`` asks for input forever), ``undeclared`` (``confirm`` asks without the capability),
``stuck-task`` (a task never ends), ``no-server-info`` (discover without ``serverInfo``), ``http-200``
(over HTTP every JSON-RPC error is a 200, not the revision's 400 or 404), and for
``guidance``: ``incoherent`` (instructions naming two unlisted tools, no ``tools`` capability, a tool
with an invalid ``x-mcp-header`` and one declaring task support without the tasks extension, prompts
listed without the capability, and ``subscriptions/listen`` agreeing to tool-list changes though
``listChanged`` is not declared; stdio only for the subscription).
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
TASKS = "io.modelcontextprotocol/tasks"
LISTS = {"tools/list", "resources/list", "resources/read", "server/discover", "prompts/list"}


class Modern(Server):
    """The fixture: ``_mcp.Server`` answering every request statelessly under the modern envelope."""

    def __init__(self, faults: set[str]) -> None:
        super().__init__("modern-faults", capabilities={"tools": {}, "resources": {},
                                                         "extensions": {TASKS: {}}})
        self.faults, self.turn, self.tasks = faults, itertools.count(), set[str]()
        self.last_caps: dict[str, Any] = {}
        self.last_params: dict[str, Any] = {}
        self.request_headers: dict[str, str] | None = None
        if "http-200" not in faults:  # the revision's statuses: 400 for refusals, 404 for unknown methods
            self.error_statuses = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400,
                                   -32022: 400, -32601: 404}
        self.methods = {"server/discover": self._discover, "tools/list": self._tools,
                        "tools/call": self._call, "resources/list": lambda p, c: {"resources": []},
                        "resources/read": self._read, "tasks/get": self._task}
        for name in ("lookup", "confirm", "job", "read_counter"):
            self.tool(name, getattr(self, f"_{name}"), description=f"The {name} tool of the modern fault "
                      "fixture, used by the readiness tests.",
                      properties={"city": {"type": "string", "description": "A city"}} if name == "lookup"
                      else {})
        if "incoherent" in faults:
            self._incoherent()

    def _incoherent(self) -> None:
        del self.capabilities["tools"], self.capabilities["extensions"]
        self.tool("region", self._lookup, properties={"region": {"type": "number", "x-mcp-header": "Region"}})
        self.tool("batch", self._lookup, execution={"taskSupport": "optional"})
        self.methods["prompts/list"] = lambda p, c: {"prompts": []}
        self.methods["subscriptions/listen"] = self._listen

    def _listen(self, params: Any, ctx: Context) -> Any:
        ctx.notify("notifications/subscriptions/acknowledged", {
            "_meta": {"io.modelcontextprotocol/subscriptionId": ctx.request_id},
            "notifications": {"toolsListChanged": True}})
        return None  # the stream stays open: no response until the client cancels

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or not isinstance(method, str):
            return None
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        refused = self._refusal(method, version, message)
        if refused is not None:
            return {"jsonrpc": "2.0", "id": message["id"], "error": refused}
        answer = super().handle(message)
        if answer is not None and isinstance(answer.get("result"), dict):
            self._finish(method, answer["result"])
        return answer

    def _refusal(self, method: str, version: Any, message: dict[str, Any]) -> dict[str, Any] | None:
        headers = self.request_headers
        if (headers is not None and "no-header-check" not in self.faults
                and headers.get("mcp-method") != method):
            return {"code": -32020, "message": "header mismatch"}
        if method == "initialize" or (version != MODERN and "accept-version" not in self.faults):
            return {"code": -32022, "message": "unsupported protocol version",
                    "data": {"supported": [MODERN], "requested": version if isinstance(version, str) else ""}}
        return None

    def _finish(self, method: str, result: dict[str, Any]) -> None:
        if "no-result-type" not in self.faults:
            result.setdefault("resultType", "complete")
        if method in LISTS and "no-cache" not in self.faults and result.get("resultType") != "input_required":
            result.update(ttlMs=60000, cacheScope="public")

    def _discover(self, params: Any, ctx: Context) -> Any:
        meta = {} if "no-server-info" in self.faults else {
            "io.modelcontextprotocol/serverInfo": {"name": "modern-faults", "version": "1.0.0"}}
        result = {"supportedVersions": [MODERN], "capabilities": self.capabilities, "_meta": meta}
        if "incoherent" in self.faults:
            result["instructions"] = "Call lookup first, then `fetch_all` and summarize_all."
        return result

    def _tools(self, params: Any, ctx: Context) -> Any:
        tools = list(self.tools)
        if "shuffle" in self.faults:
            shift = next(self.turn) % len(tools)
            tools = tools[shift:] + tools[:shift]
        return {"tools": tools}

    def _read(self, params: Any, ctx: Context) -> Any:
        raise Fail(-32002 if "old-resource-code" in self.faults else -32602, "unknown resource")

    def _task(self, params: Any, ctx: Context) -> Any:
        task_id = params.get("taskId")
        if task_id not in self.tasks:
            raise Fail(-32602, "unknown task")
        status = "working" if "stuck-task" in self.faults else "completed"
        state = {"taskId": task_id, "status": status, "createdAt": "2026-01-01T00:00:00Z",
                 "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 100}
        if status == "completed":
            state["result"] = text_result("job done", isError=False, resultType="complete")
        return state

    def _lookup(self, args: Any, ctx: Context) -> Any:
        return text_result("sunny")

    def _read_counter(self, args: Any, ctx: Context) -> Any:
        return text_result("7")

    def _confirm(self, args: Any, ctx: Context) -> Any:
        asked = "elicitation" in self.last_caps or {"nag", "undeclared"} & self.faults
        if not asked:
            return text_result("this tool needs the elicitation capability", isError=True)
        if self.last_params.get("inputResponses") and "nag" not in self.faults:
            return text_result("confirmed")
        request = {"method": "elicitation/create", "params": {"mode": "form", "message": "Confirm?",
                   "requestedSchema": {"type": "object", "properties": {}}}}
        return {"resultType": "input_required", "inputRequests": {"ok": request}, "requestState": "s"}

    def _job(self, args: Any, ctx: Context) -> Any:
        if TASKS not in (self.last_caps.get("extensions") or {}):
            return text_result("job done")
        task_id = f"task-{len(self.tasks) + 1}"
        self.tasks.add(task_id)
        return {"resultType": "task", "taskId": task_id, "status": "working", "ttlMs": 60000,
                "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
                "pollIntervalMs": 100}

    def _call(self, params: Any, ctx: Context) -> Any:
        meta = params.get("_meta") if isinstance(params, dict) else None
        caps = meta.get(META_CAPS) if isinstance(meta, dict) else None
        self.last_caps = caps if isinstance(caps, dict) else {}
        self.last_params = params if isinstance(params, dict) else {}
        return super()._call(params, ctx)


def main(argv: list[str]) -> int:
    """Serve on stdio, or over HTTP with ``--http``; the other arguments are faults."""
    server = Modern({a for a in argv if a != "--http"})
    server.run(http="--http" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
