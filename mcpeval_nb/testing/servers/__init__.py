"""Fixture MCP servers (newline-delimited JSON-RPC on stdio unless noted)."""
