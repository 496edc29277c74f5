"""Fixture: the clean probe server (SPEC 17 ``probe_clean_server``).

Modes (first argument): ``clean`` (default), ``broken`` (the 3rd ``read_counter`` call errors -32000 and
``describe_status`` answers ``wrong``), ``early-exit`` (exits 23 on the first message), ``malformed``
(a ``not-json`` line, then a response holding both result and error), ``mismatched-id`` (answers with
id + 1).  Results carry the text ``CANARY raw response``; errors carry ``CANARY private error``.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

OUTPUT_SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}, "status": {"type": "string"}},
                 "required": ["count", "status"]}


def build(mode: str) -> Server:
    """The server for ``mode`` (``clean`` or ``broken``)."""
    server = Server("probe-clean")
    state = {"counter": 0, "reads": 0, "flaky": 0}

    def read_counter(args: Any, ctx: Context) -> Any:
        state["reads"] += 1
        if mode == "broken" and state["reads"] == 3:
            raise Fail(-32000)
        state["counter"] += 1
        return text_result(structuredContent={"count": state["counter"], "status": "ready"})

    def describe_status(args: Any, ctx: Context) -> Any:
        status = "wrong" if mode == "broken" else "ready"
        return text_result(status=status, structuredContent={"count": state["counter"], "status": status})

    def flaky_read(args: Any, ctx: Context) -> Any:
        state["flaky"] += 1
        if state["flaky"] <= 2:
            raise Fail(-32001, retryable=True)
        return text_result(structuredContent={"count": state["counter"], "status": "ready"})

    def break_session(args: Any, ctx: Context) -> Any:
        raise Fail(-32002, retryable=False)

    def ok(args: Any, ctx: Context) -> Any:
        return text_result(structuredContent={"count": state["counter"], "status": "ready"})

    def shared_read(args: Any, ctx: Context) -> Any:
        port = args.get("port")
        if isinstance(port, int) and 0 < port < 65536:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(("127.0.0.1", 0))
        return ok(args, ctx)

    server.tool("read_counter", read_counter, description="Read the fixture counter and return it with "
                "the server status.", outputSchema=OUTPUT_SCHEMA,
                properties={"secret": {"type": "string", "description": "An opaque note the tool ignores."}})
    server.tool("describe_status", describe_status, description="Describe the fixture server status as a "
                "literal top-level status field.")
    server.tool("flaky_read", flaky_read, description="A read that fails twice with a retryable error, "
                "then succeeds.")
    server.tool("break_session", break_session, read_only=False, description="Always fails with a "
                "non-retryable error, breaking the session.")
    server.tool("recover_session", ok, read_only=False, description="Recovers the session after "
                "break_session; always succeeds.")
    server.tool("session_status", ok, description="Report whether the session is healthy; succeeds when "
                "it is.")
    server.tool("shared_read", shared_read, description="A read that is safe under concurrent clients; "
                "takes a loopback port.", properties={"port": {"type": "integer",
                                                                "description": "A loopback TCP port."}})
    return server


def _faulty(mode: str) -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if mode == "early-exit":
            sys.exit(23)
        if not isinstance(message, dict) or "id" not in message:
            continue
        if mode == "malformed":  # a banner line (tolerated), then a response with both result and error
            both = {"jsonrpc": "2.0", "id": message["id"], "result": {}, "error": {"code": 1, "message": "x"}}
            sys.stdout.write("not-json\n" + json.dumps(both) + "\n")
        else:
            answer = {"jsonrpc": "2.0", "id": message["id"] + 1 if isinstance(message["id"], int) else 0,
                      "result": {}}
            sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    """Run in the mode named by ``argv[0]`` (default ``clean``)."""
    mode = argv[0] if argv else "clean"
    if mode in ("early-exit", "malformed", "mismatched-id"):
        _faulty(mode)
        return
    build(mode).run()


if __name__ == "__main__":
    main(sys.argv[1:])
