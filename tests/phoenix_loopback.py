"""Start Arize Phoenix bound to 127.0.0.1 only (tests): its gRPC collector binds ``[::]`` unconditionally,
so this launcher rewrites that bind to loopback before running ``phoenix serve``.  Telemetry is turned
off by the caller's environment (``PHOENIX_TELEMETRY_ENABLED=false``)."""

from __future__ import annotations

import sys

import grpc.aio._server as aio_server

_add = aio_server.Server.add_insecure_port


def _loopback(self: aio_server.Server, address: str) -> int:
    return _add(self, address.replace("[::]", "127.0.0.1"))


aio_server.Server.add_insecure_port = _loopback  # type: ignore[method-assign]

if __name__ == "__main__":
    from phoenix.server.main import main

    sys.argv = ["phoenix", "serve"]
    sys.exit(main())
