"""Fixture: the broken probe server (SPEC 17 ``probe_broken_server``).

``read_counter``'s description is 2000 ``x``; ``describe_status`` requires an undeclared property
(invalid schema); ``flaky_read`` alternates -32001 and -32003 (unstable code); ``break_session`` and
``session_status`` always fail -32002; ``shared_read`` binds the given loopback port for 200 ms and fails
-32004 if it cannot; the 3rd ``read_counter`` call errors -32000; other successes answer
``status: "wrong", reset: true``.
"""

from __future__ import annotations

import socket
import sys
import time
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]


def build() -> Server:
    """The broken server."""
    server = Server("probe-broken")
    state = {"reads": 0, "flaky": 0}

    def wrong(args: Any, ctx: Context) -> Any:
        return text_result(status="wrong", reset=True)

    def read_counter(args: Any, ctx: Context) -> Any:
        state["reads"] += 1
        if state["reads"] == 3:
            raise Fail(-32000)
        return wrong(args, ctx)

    def flaky_read(args: Any, ctx: Context) -> Any:
        state["flaky"] += 1
        raise Fail(-32001 if state["flaky"] % 2 else -32003, retryable=True)

    def always_fail(args: Any, ctx: Context) -> Any:
        raise Fail(-32002, retryable=False)

    def shared_read(args: Any, ctx: Context) -> Any:
        port = args.get("port")
        try:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", port if isinstance(port, int) else 0))
                time.sleep(0.2)
        except OSError:
            raise Fail(-32004) from None
        return wrong(args, ctx)

    server.tool("read_counter", read_counter, description="x" * 2000)
    server.tool("describe_status", wrong, required=["missing"])
    server.tool("flaky_read", flaky_read)
    server.tool("break_session", always_fail, read_only=None)
    server.tool("recover_session", wrong, read_only=None)
    server.tool("session_status", always_fail)
    server.tool("shared_read", shared_read, properties={"port": {"type": "integer"}})
    return server


if __name__ == "__main__":
    del sys.argv[1:]
    build().run()
