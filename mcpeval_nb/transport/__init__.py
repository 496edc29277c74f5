"""Transport: upstream endpoint policy and loopback provenance checks, bounded MCP clients.

``transport.policy`` holds the rules every HTTP-speaking part shares (SPEC 13.1-13.2): which upstream
URLs may be contacted and which Host/Origin headers count as loopback.
"""
