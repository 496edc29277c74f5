"""Fixture: workflow server (SPEC 17 ``workflow_server``): stdio, or HTTP with ``http`` as second argument.

Logs ``initialize`` and ``tools/call`` events to ``$WORKFLOW_CALL_LOG`` (one line each, labels only).
Tools ``read_status``, ``read_other``, ``invalid_read`` (always -32602 ``CANARY private error``, retryable
false).  Modes: ``clean``, ``poison`` (``read_other`` poisons the session: later ``read_status`` answers
``status: "wrong"``), ``error-poison`` (``invalid_read`` poisons), ``crash`` (``read_other`` exits 23),
``writer`` (``read_other`` annotated ``readOnlyHint: false``), ``malformed-error-flag`` (``isError`` is a
string).  Results hold top-level ``status``, a literal key ``"structuredContent.status"`` and
``structuredContent {status, items: [{ready: true}], nullable: null, "a/b": {"~state": "ready"}}``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]


def _log(event: str) -> None:
    path = os.environ.get("WORKFLOW_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(event + "\n")


def build(mode: str) -> Server:
    """The workflow server for ``mode``."""
    server = Server("workflow")
    state = {"poisoned": False}

    def answer() -> Any:
        status = "wrong" if state["poisoned"] else "ready"
        extra: dict[str, Any] = {"isError": "no"} if mode == "malformed-error-flag" else {}
        return text_result(status=status, **{"structuredContent.status": status}, structuredContent={
            "status": status, "items": [{"ready": True}], "nullable": None, "a/b": {"~state": "ready"}},
            **extra)

    def read_status(args: Any, ctx: Context) -> Any:
        _log("tools/call read_status")
        return answer()

    def read_other(args: Any, ctx: Context) -> Any:
        _log("tools/call read_other")
        if mode == "crash":
            sys.exit(23)
        if mode == "poison":
            state["poisoned"] = True
        return answer()

    def invalid_read(args: Any, ctx: Context) -> Any:
        _log("tools/call invalid_read")
        if mode == "error-poison":
            state["poisoned"] = True
        raise Fail(-32602, retryable=False)

    initialize = server.methods["initialize"]

    def logged_initialize(params: Any, ctx: Context) -> Any:
        _log("initialize")
        return initialize(params, ctx)

    server.methods["initialize"] = logged_initialize
    server.tool("read_status", read_status)
    server.tool("read_other", read_other, read_only=mode != "writer")
    server.tool("invalid_read", invalid_read)
    return server


if __name__ == "__main__":
    argv = sys.argv[1:]
    build(argv[0] if argv else "clean").run(http=len(argv) > 1 and argv[1] == "http")
