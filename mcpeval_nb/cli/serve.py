"""``mcpeval-nb serve``: a loopback MCP endpoint over findings, trends and annotations (SPEC 13.1)."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS"]


@click.command("serve", epilog=opt.example(
    "mcpeval-nb serve --listen 127.0.0.1:8940",
    "mcpeval-nb serve --listen 127.0.0.1:8940 --allow-spawn --print-config"))
@click.option("--listen", required=True, help="Loopback socket address, e.g. 127.0.0.1:8940 (port 0: any).")
@click.option("--allow-spawn", is_flag=True,
              help="Also offer run_probe, scaffold, score and verify_finding (they launch server processes).")
@click.option("--print-config", is_flag=True, help="Print the resolved configuration and exit.")
@opt.root
def serve_cmd(listen: str, allow_spawn: bool, print_config: bool, root: str | None) -> int:
    """Serve findings, readiness trends and annotations to MCP clients over loopback HTTP.

    Prints one line with the endpoint URL on stderr and serves until SIGTERM or SIGINT.  Requests need a
    loopback Host, no foreign Origin, and Content-Type application/json.
    """
    options = mcpeval_nb.ServeOptions(listen=listen, allow_spawn=allow_spawn, root=root)
    if print_config:
        for line in mcpeval_nb.serve_config(options).lines():
            click.echo(line)
        return 0
    return mcpeval_nb.run_serve(options)


COMMANDS = (serve_cmd,)
