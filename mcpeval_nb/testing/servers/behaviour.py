"""Fixture: a server with a known failure profile, and "new builds" of it with planted regressions
(``mcpeval-nb mock`` and ``replay`` tests, notebook 08).

Tools (every outcome and latency drawn from a per-tool ``random.Random(f"{seed}:{tool}")``, one draw per
call, so a seed and a call sequence give the same answers):

- ``search`` (``query`` string, required; ``limit`` integer; ``mode`` enum ``fast``/``deep``): 8% an
  ``isError`` result ``no results for '<query>'``; 4% JSON-RPC -32001 ``search backend busy, retry in 3
  seconds``; with ``mode: deep`` 30% -32001 instead.  Latency log-normal, median 12 ms (deep 30 ms).
  Results list ``limit`` (default 3) lines that repeat the query.
- ``get_item`` (``item_id`` string, required): 10% JSON-RPC -32602 ``item not found: "<item_id>"``.
  Latency log-normal, median 5 ms.
- ``status``: always ok, 1-3 ms.
- ``write_note`` (``text``): annotated ``readOnlyHint: false`` (a writer); ok, 2 ms.

Planted regressions (``--plant NAME``, repeatable): ``error-rate`` (``get_item`` fails 45%),
``new-code`` (``search`` answers -32050 ``index rebuilding`` instead of -32001: the same rate, a new
code), ``slow`` (``status``
takes 40-60 ms).  Unknown tools are -32602.  Texts carry ``CANARY`` markers (arguments are echoed into
results and error messages); error messages quote what varies, so their templates are stable.

Run with ``http`` as an argument to serve Streamable HTTP on loopback instead of stdio; ``--speed X``
divides every latency by ``X`` (a large value removes them: ``bench/bench_mock.py``'s baseline).
"""

from __future__ import annotations

import math
import random
import sys
import time
from typing import Any

if __package__:
    from ._mcp import Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Context, Fail, Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

CANARY_RESULT = "CANARY behaviour result"
PLANTS = ("error-rate", "new-code", "slow")


class Behaviour:
    """The tools' shared state: the seed, the plants, one random stream per tool."""

    def __init__(self, seed: int, plants: set[str], speed: float = 1.0) -> None:
        self.seed, self.plants, self.speed = seed, plants, speed
        self._streams: dict[str, random.Random] = {}

    def rng(self, tool: str) -> random.Random:
        if tool not in self._streams:
            self._streams[tool] = random.Random(f"{self.seed}:{tool}")
        return self._streams[tool]

    def wait(self, rng: random.Random, median_ms: float, sigma: float = 0.5) -> None:
        self.sleep(min(2000.0, rng.lognormvariate(math.log(median_ms), sigma)))

    def sleep(self, ms: float) -> None:
        time.sleep(ms / 1000 / self.speed)


def build(seed: int = 0, plants: set[str] | None = None, speed: float = 1.0) -> Server:
    """The server (``plants``: the planted regressions; ``speed``: latencies are divided by it)."""
    server = Server("behaviour")
    state = Behaviour(seed, plants or set(), speed)

    def search(args: Any, ctx: Context) -> Any:
        rng = state.rng("search")
        u, deep = rng.random(), args.get("mode") == "deep"
        state.wait(rng, 30 if deep else 12)
        query = str(args.get("query", ""))
        if (deep and u < 0.30) or (not deep and u < 0.04):
            if "new-code" in state.plants:
                raise Fail(-32050, "index rebuilding")
            raise Fail(-32001, "search backend busy, retry in 3 seconds")
        if not deep and u < 0.12:
            return text_result(f"no results for '{query}'", isError=True)
        limit = args.get("limit", 3)
        count = limit if isinstance(limit, int) and 0 <= limit <= 50 else 3
        return text_result("\n".join(f"{CANARY_RESULT} {i}: {query}" for i in range(count)))

    def get_item(args: Any, ctx: Context) -> Any:
        rng = state.rng("get_item")
        u = rng.random()
        state.wait(rng, 5)
        rate = 0.45 if "error-rate" in state.plants else 0.10
        item = str(args.get("item_id", ""))
        if u < rate:
            raise Fail(-32602, f'item not found: "{item}"')
        return text_result(f"{CANARY_RESULT}: item {item}", structuredContent={"id": item, "stock": 3})

    def status(args: Any, ctx: Context) -> Any:
        rng = state.rng("status")
        low, high = (40, 60) if "slow" in state.plants else (1, 3)
        state.sleep(rng.uniform(low, high))
        return text_result("ready")

    def write_note(args: Any, ctx: Context) -> Any:
        state.sleep(2)
        return text_result("noted")

    server.tool("search", search, description="Search the catalog. CANARY tool description.",
                properties={"query": {"type": "string", "description": "Words. CANARY schema text."},
                            "limit": {"type": "integer", "minimum": 0, "maximum": 50},
                            "mode": {"type": "string", "enum": ["fast", "deep"]}},
                required=["query"])
    server.tool("get_item", get_item, description="One item by id.",
                properties={"item_id": {"type": "string"}}, required=["item_id"])
    server.tool("status", status, description="Service status.")
    server.tool("write_note", write_note, description="Write a note.",
                properties={"text": {"type": "string"}}, read_only=False)
    return server


def _options(argv: list[str]) -> tuple[int, set[str], bool, float]:
    seed, plants, http, speed = 0, set(), False, 1.0
    args = iter(argv)
    for arg in args:
        if arg == "--seed":
            seed = int(next(args))
        elif arg == "--plant":
            plant = next(args)
            if plant not in PLANTS:
                raise SystemExit(f"unknown plant {plant}; one of {', '.join(PLANTS)}")
            plants.add(plant)
        elif arg == "--speed":
            speed = float(next(args))
        elif arg == "http":
            http = True
    return seed, plants, http, speed


if __name__ == "__main__":
    _seed, _plants, _http, _speed = _options(sys.argv[1:])
    build(_seed, _plants, _speed).run(http=_http)
