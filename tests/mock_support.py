"""Helpers for the mock and replay tests: recorded stores with a known behaviour, written through the real
journal writer (so their latencies and outcomes are exact), recordings of the ``behaviour`` fixture server
through the real shim, running mock processes, and raw HTTP calls."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcpeval_nb as me
from mcpeval_nb.clock import format_ms
from mcpeval_nb.journal.append import append_records
from mcpeval_nb.privacy.catalog import CatalogRecord, catalog_tool
from mcpeval_nb.privacy.errorinfo import error_info, tool_error_info
from mcpeval_nb.privacy.records import CallRecord
from mcpeval_nb.privacy.shape import EnumIndex, shape
from tests.processes import stop
from tests.serve_support import request, rpc

SERVER = "recorded"
START_MS = 1_785_542_400_000  # 2026-08-01T00:00:00Z
CANARY = "CANARY-mock-31"


@dataclass(frozen=True)
class Behaviour:
    """One tool's known behaviour: its outcomes (kind, code, message, count) and latency sampler."""

    name: str
    outcomes: tuple[tuple[str, int | None, str | None, int], ...]
    latency: tuple[str, float, float]  # ("lognormal", median, sigma) or ("uniform", low, high)
    schema: dict[str, Any]
    args: tuple[dict[str, Any], ...] = ({},)

    @property
    def calls(self) -> int:
        return sum(n for *_, n in self.outcomes)

    def draw_latency(self, rng: random.Random) -> int:
        kind, a, b = self.latency
        value = rng.lognormvariate(__import__("math").log(a), b) if kind == "lognormal" else rng.uniform(a, b)
        return max(0, round(value))


def _schema(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


#: Three tools, 200 recorded calls each, with wide latencies (see test_mock_statistics.py).
WIDE = (
    Behaviour("lookup", (("ok", None, None, 160), ("tool-error", None, f"no match for '{CANARY}'", 20),
                         ("rpc-error", -32001, f"backend {CANARY} busy", 20)),
              ("lognormal", 300.0, 0.5), _schema({"q": {"type": "string", "description": CANARY}}, ("q",)),
              ({"q": f"{CANARY} a"}, {"q": f"{CANARY} bb"})),
    Behaviour("fetch", (("ok", None, None, 180), ("rpc-error", -32602, f'item "{CANARY}" not found', 20)),
              ("lognormal", 360.0, 0.45), _schema({"id": {"type": "string"},
                                                   "mode": {"type": "string", "enum": ["fast", "deep"]}}),
              ({"id": f"{CANARY}-1", "mode": "fast"},)),
    Behaviour("ping_status", (("ok", None, None, 200),), ("lognormal", 240.0, 0.55), _schema({})),
)


def write_recorded(root: Path, behaviours: tuple[Behaviour, ...] = WIDE, *, seed: int = 7,
                   catalog: bool = True, server: str = SERVER, unknown: int = 0) -> None:
    """Write the behaviours' calls (shuffled, one session per 50 calls) and one catalog listing."""
    rng = random.Random(seed)
    salt = me.load_salt(root)
    enums = EnumIndex()
    for b in behaviours:
        enums.learn(b.name, b.schema)
    plan = [(b, kind, code, msg) for b in behaviours for kind, code, msg, n in b.outcomes for _ in range(n)]
    plan += [(None, "rpc-error", -32602, f"unknown tool {CANARY}")] * unknown
    rng.shuffle(plan)
    records = []
    for i, (b, kind, code, msg) in enumerate(plan):
        if b is None:
            tool, args, latency = "missing_tool", {}, 1
        else:
            tool, args, latency = b.name, rng.choice(b.args), b.draw_latency(rng)
        if kind == "ok":
            error = None
        elif kind == "tool-error":
            error = tool_error_info({"content": [{"type": "text", "text": msg}], "isError": True}, salt)
        else:
            error = error_info({"error": {"code": code, "message": msg}}, salt)
        records.append(CallRecord(ts=format_ms(START_MS + i * 1000), session=f"s{i // 50}", seq=i + 2,
                                  server=server, method="tools/call", tool=tool,
                                  args=shape(args, tool, enums), latency_ms=latency,
                                  outcome="ok" if kind == "ok" else "error", error=error, shim_self_us=5))
    append_records(root, records)
    if catalog:
        entries = [{"name": b.name, "description": f"{CANARY} description", "inputSchema": b.schema,
                    "annotations": {"readOnlyHint": True}} for b in behaviours]
        tools = tuple(catalog_tool(e, salt) for e in entries)
        append_records(root, [CatalogRecord(ts=format_ms(START_MS - 1000), session="s0", seq=1, server=server,
                                            complete=True, tools=tools)])


@contextmanager
def mock_process(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``mcpeval-nb mock ... --listen 127.0.0.1:0`` as a process; yields its endpoint URL."""
    proc = subprocess.Popen([sys.executable, "-m", "mcpeval_nb", "mock", *args, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # waits for the listening line (or the end of a failed start)
        assert "listening on " in line, line
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        stop(proc)


def address(url: str) -> tuple[str, int]:
    """``(host, port)`` of a loopback endpoint URL."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    return host, int(port)


def call(url: str, name: str, arguments: dict[str, Any], msg_id: int = 1) -> tuple[dict[str, Any], float]:
    """One legacy ``tools/call`` over raw HTTP: the JSON-RPC answer and the round trip in milliseconds."""
    started = time.perf_counter()
    status, _, body = request(address(url), rpc("tools/call", msg_id, name=name, arguments=arguments))
    elapsed = (time.perf_counter() - started) * 1000
    assert status == 200, body
    answer: dict[str, Any] = json.loads(body)
    return answer, elapsed


def outcome_of(answer: dict[str, Any]) -> tuple[str, int | None, str | None]:
    """``(kind, code, template id)`` of a mock's answer."""
    if "error" in answer:
        data = answer["error"].get("data") or {}
        return "rpc-error", answer["error"]["code"], data.get("template_id")
    result = answer["result"]
    if result.get("isError"):
        text = result["content"][0]["text"]
        template = text.split("template ", 1)[1].split(" ", 1)[0] if "template " in text else None
        return "tool-error", None, template
    return "ok", None, None


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
