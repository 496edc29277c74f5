"""Fixture: a phase-swapped server whose tool list changes when an advance tool is called.

Phase ``design`` (at start): ``describe_model``, ``load_model``, ``list_models``.  Calling ``load_model``
(unannotated, as in mcp-xray's capture example) swaps to phase ``run``: ``describe_model`` (its
description and schema change), ``run_query``, ``list_models``, ``unload_model``; ``load_model`` is gone.
``unload_model`` (a writer: ``readOnlyHint: false``) swaps back.  Resources (2) and prompts (1) are
declared.  Descriptions carry ``CANARY tool description``.
"""

from __future__ import annotations

import sys
from typing import Any

if __package__:
    from ._mcp import Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import Server, text_result  # type: ignore[no-redef,import-not-found,unused-ignore]

CANARY_DESCRIPTION = "CANARY tool description"


def _design(server: Server) -> None:
    server.tools.clear()
    server.tool_handlers.clear()
    server.tool(
        "describe_model",
        lambda a, c: text_result("no model"),
        description=f"Describe the model being designed. {CANARY_DESCRIPTION}",
        properties={"detail": {"type": "boolean"}},
    )
    server.tool(
        "load_model",
        lambda a, c: _swap(server, _run),
        read_only=None,
        description=f"Load a model and enter the run phase. {CANARY_DESCRIPTION}",
        properties={"model": {"type": "object"}},
        required=["model"],
    )
    server.tool(
        "list_models", lambda a, c: text_result("m1"), description=f"List models. {CANARY_DESCRIPTION}"
    )


def _run(server: Server) -> None:
    server.tools.clear()
    server.tool_handlers.clear()
    server.tool(
        "describe_model",
        lambda a, c: text_result("loaded"),
        description=f"Describe the loaded model. {CANARY_DESCRIPTION}",
        properties={"detail": {"type": "boolean"}, "section": {"type": "string"}},
    )
    server.tool(
        "run_query",
        lambda a, c: text_result("CANARY raw response " * 40),
        description=f"Run a query against the loaded model. {CANARY_DESCRIPTION}",
        properties={"query": {"type": "string"}, "limit": {"type": "integer"}},
        required=["query"],
    )
    server.tool(
        "list_models", lambda a, c: text_result("m1"), description=f"List models. {CANARY_DESCRIPTION}"
    )
    server.tool(
        "unload_model",
        lambda a, c: _swap(server, _design),
        read_only=False,
        description=f"Unload the model and return to design. {CANARY_DESCRIPTION}",
    )


def _swap(server: Server, phase: Any) -> Any:
    phase(server)
    return text_result("CANARY raw response")


def build() -> Server:
    """The server, in phase ``design``."""
    server = Server(
        "phase-swap", capabilities={"tools": {"listChanged": True}, "resources": {}, "prompts": {}}
    )
    server.methods["resources/list"] = lambda p, c: {
        "resources": [{"uri": "mem://CANARY/a", "name": "a"}, {"uri": "mem://CANARY/b", "name": "b"}]
    }
    server.methods["prompts/list"] = lambda p, c: {"prompts": [{"name": "CANARY-prompt"}]}
    _design(server)
    return server


def main(argv: list[str]) -> None:
    """Serve on stdio."""
    build().run()


if __name__ == "__main__":
    main(sys.argv[1:])
