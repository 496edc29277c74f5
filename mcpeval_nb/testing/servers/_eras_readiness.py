"""The ``--readiness`` profile of the ``sdk_eras`` fixture: annotated tools the battery calls, canaries.

``sdk_eras --readiness`` adds instructions and these tools (each annotated read-only, so the battery
calls them without ``--confirm-read-only``, and each asking only for capabilities the client declared):

- ``describe_weather(city)``: a structured result under an output schema; its description holds a canary;
- ``region_lookup(region)``: ``region`` is marked ``x-mcp-header: Region``;
- ``confirm_action(item)``: form elicitation (modern: an input-required round; legacy: an
  ``elicitation/create`` request); a tool error without the capability;
- ``open_portal()``: URL-mode elicitation to a URL that holds a canary;
- ``ask_model()``: sampling with ``tools`` and ``toolChoice``.

The fixture's own ``job(ms, end, note)`` turns the note into a task's result (a canary there too).  The
instructions name ``describe_weather`` and ``forecast_tomorrow`` (not a listed tool: ``guidance`` counts
it) and hold a canary.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import InputRequiredResult, SamplingMessage, TextContent, Tool, ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

__all__ = ["CANARY_DESCRIPTION", "CANARY_INSTRUCTIONS", "CANARY_TASK", "CANARY_URL", "INSTRUCTIONS",
           "add_readiness_tools"]

CANARY_INSTRUCTIONS = "CANARY-era-instructions-51d2"
CANARY_DESCRIPTION = "CANARY-era-description-7be0"
CANARY_URL = "https://example.invalid/CANARY-era-url-c3a9"
CANARY_TASK = "CANARY-era-task-0f4e"
INSTRUCTIONS = f"Use describe_weather first, then forecast_tomorrow. {CANARY_INSTRUCTIONS}"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class Weather(BaseModel):
    """Today's weather."""

    city: str
    celsius: int
    sky: str


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declared(ctx: Context, capability: str) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and getattr(caps, capability, None) is not None


def _ask(key: str, method: str, params: dict[str, Any]) -> InputRequiredResult:
    return InputRequiredResult.model_validate(
        {"inputRequests": {key: {"method": method, "params": params}}, "requestState": f"state-{key}"})


class _Ok(BaseModel):
    ok: bool


def _elicitation_tools(server: MCPServer[Any]) -> None:
    @server.tool(annotations=READ_ONLY, description="Ask the user to confirm an action before it is "
                 "reported as confirmed (form elicitation).")
    async def confirm_action(item: Annotated[str, Field(description="What to confirm")],
                             ctx: Context) -> Any:
        if not _declared(ctx, "elicitation"):
            raise ToolError("this tool needs the elicitation capability")
        if _modern(ctx):
            if ctx.input_responses:
                return "confirmed"
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
            return _ask("confirm", "elicitation/create",
                        {"mode": "form", "message": "Confirm?", "requestedSchema": schema})
        answer = await ctx.elicit("Confirm?", _Ok)
        return "confirmed" if answer.action == "accept" else "declined"

    @server.tool(annotations=READ_ONLY, description="Send the user to a web page to finish signing in "
                 "(URL-mode elicitation).")
    async def open_portal(ctx: Context) -> Any:
        if not _declared(ctx, "elicitation"):
            raise ToolError("this tool needs the elicitation capability")
        if _modern(ctx):
            if ctx.input_responses:
                return "portal visited"
            return _ask("portal", "elicitation/create",
                        {"mode": "url", "message": "Sign in", "url": CANARY_URL})
        answer = await ctx.elicit_url("Sign in", CANARY_URL, str(uuid.uuid4()))
        return f"portal {answer.action}"


def _sampling_tool(server: MCPServer[Any]) -> None:
    @server.tool(annotations=READ_ONLY, description="Ask the client's model a question, offering it one "
                 "tool (sampling with tools).")
    async def ask_model(ctx: Context) -> Any:
        if not _declared(ctx, "sampling"):
            raise ToolError("this tool needs the sampling capability")
        tool = {"name": "lookup", "inputSchema": {"type": "object", "properties": {}}}
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "Which city?"}}],
                  "maxTokens": 50, "tools": [tool], "toolChoice": {"mode": "auto"}}
        if _modern(ctx):
            if ctx.input_responses:
                return "model answered"
            return _ask("sample", "sampling/createMessage", params)
        await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text="Which city?"))],
            max_tokens=50, tools=[Tool.model_validate(tool)], tool_choice={"mode": "auto"})
        return "model answered"


def add_readiness_tools(server: MCPServer[Any]) -> None:
    """Register the profile's tools on ``server`` (see the module docstring)."""
    @server.tool(annotations=READ_ONLY, description=f"Describe today's weather in a city: temperature in "
                 f"degrees Celsius and the sky. {CANARY_DESCRIPTION}")
    def describe_weather(city: Annotated[str, Field(description="The city to describe")]) -> Weather:
        return Weather(city=city, celsius=21, sky="clear")

    @server.tool(annotations=READ_ONLY, description="Look up the data centre serving a cloud region; the "
                 "region travels in a header as well.")
    def region_lookup(region: Annotated[str, Field(description="The cloud region",
                                                   json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return f"region {region} is served"

    _elicitation_tools(server)
    _sampling_tool(server)
