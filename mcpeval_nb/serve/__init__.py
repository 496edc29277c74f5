"""``serve``: a loopback MCP endpoint over findings, readiness trends and annotations (SPEC 13.1).

``FindingsServer`` / ``run_serve`` listen on a loopback address only and answer JSON-RPC over HTTP POST
(one request per connection, JSON responses).  Modules: ``config`` (options, ``--print-config``),
``listener`` (HTTP side), ``rpc`` (JSON-RPC), ``table`` (the tool table: one ``Tool`` row per tool),
``base`` (what a row and a handler are made of), ``call`` (the one call path and the spawn gate),
``schemas`` (the schema pieces the table uses), ``store_tools`` (findings, trends, annotations) and
``spawn_tools`` (run_probe, scaffold, score, verify_finding, with ``--allow-spawn`` only).
"""

from __future__ import annotations

from .config import ServeConfig, ServeOptions, serve_config
from .listener import FindingsServer, run_serve

__all__ = ["FindingsServer", "ServeConfig", "ServeOptions", "run_serve", "serve_config"]
