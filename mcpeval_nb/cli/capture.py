"""``mcpeval-nb shim`` and ``mcpeval-nb shim-http``: the recording shims (SPEC 2.6, 13.2)."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt
from .shim_fast import shim_options


@click.command("shim", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
               epilog=opt.example("mcpeval-nb shim --server time -- python -m mcp_server_time"))
@opt.server()
@opt.root
@click.option("--strict-frames", is_flag=True,
              help="Refuse a frame over 4 MiB and close both sides, instead of forwarding it unrecorded.")
@opt.no_catalog
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def shim_cmd(server: str, root: str | None, strict_frames: bool, no_catalog: bool,
             command: tuple[str, ...]) -> int:
    """Run a stdio MCP server and record its calls: mcpeval-nb shim --server LABEL -- CMD [ARGS...].

    Frames pass byte for byte in both directions (one over 4 MiB too, recorded without its content,
    unless --strict-frames); the server's stderr passes through; the exit code is the server's (128 +
    signal number when it died by a signal).  The session is $MCPEVAL_SESSION or a fresh uuid.
    """
    return mcpeval_nb.run_shim(shim_options(server=server, root=root, strict_frames=strict_frames,
                                            no_catalog=no_catalog, command=command))


@click.command("shim-http",
               epilog=opt.example("mcpeval-nb shim-http --server docs --listen 127.0.0.1:8931 --upstream http://127.0.0.1:3000/mcp"))
@opt.server()
@click.option("--listen", required=True, help="Loopback socket address, e.g. 127.0.0.1:8931 (port 0: any).")
@click.option("--upstream", required=True, help="Upstream Streamable HTTP endpoint URL.")
@opt.allow_remote_http
@opt.root
@opt.no_catalog
def shim_http_cmd(server: str, listen: str, upstream: str, allow_remote_http: bool, root: str | None,
                  no_catalog: bool) -> int:
    """Proxy a Streamable HTTP MCP server on a loopback address and record its calls.

    Prints one line with the listening URL on stderr and serves until SIGTERM or SIGINT.
    $MCPEVAL_HTTP_AUTHORIZATION, when set, is sent upstream on requests that carry no Authorization.
    """
    options = mcpeval_nb.HTTPShimOptions(server=server, listen=listen, upstream=upstream,
                                         allow_remote_http=allow_remote_http, root=root,
                                         catalog=not no_catalog)
    return mcpeval_nb.run_shim_http(options)


COMMANDS = (shim_cmd, shim_http_cmd)
