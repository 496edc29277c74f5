"""``mcpeval-nb mock`` and ``mcpeval-nb replay`` (docs/mock.md): a server that behaves like a recorded one,
and the recorded traffic's shape mix against a new build."""

from __future__ import annotations

from typing import Any

import click

import mcpeval_nb

from . import options as opt

__all__ = ["COMMANDS", "SCHEMA_COMMANDS"]


def _window(f: Any) -> Any:
    f = click.option("--until", default=None, metavar="DAY",
                     help="Last UTC day of the recording (YYYY-MM-DD).")(f)
    return click.option("--since", default=None, metavar="DAY",
                        help="First UTC day of the recording (YYYY-MM-DD).")(f)


@click.command("mock", epilog=opt.example(
    "mcpeval-nb mock --server docs --profile docs.mock.json",
    "mcpeval-nb mock --from-profile docs.mock.json --listen 127.0.0.1:8941 --seed 7",
    "mcpeval-nb mock --server docs --speed 1000   # stdio, latencies removed"))
@click.option("--server", default=None, help="The recorded server to behave like (its label).")
@opt.root
@_window
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the draws: the same seed and requests give the same answers.")
@click.option("--speed", type=float, default=1.0, show_default=True,
              help="Divide the recorded latencies by this (a large value removes them).")
@click.option("--listen", default=None,
              help="Serve Streamable HTTP on this loopback address (default: stdio).")
@click.option("--profile", "profile_out", type=click.Path(dir_okay=False), default=None,
              help="Write the mock profile (the recorded distributions, content-free) to FILE and exit.")
@click.option("--from-profile", "profile_in", type=click.Path(dir_okay=False), default=None,
              help="Serve a mock profile file instead of a capture root.")
def mock_cmd(server: str | None, root: str | None, since: str | None, until: str | None, seed: int,
             speed: float, listen: str | None, profile_out: str | None, profile_in: str | None) -> int:
    """Serve an MCP server that behaves like a recorded one: its tools, outcome mix, error codes,
    latencies and result sizes, drawn from the recording; never a recorded value.

    Speaks both protocol eras, on stdio (default) or loopback Streamable HTTP (--listen).
    """
    if profile_in is not None:
        if server is not None or root is not None or since is not None or until is not None:
            raise mcpeval_nb.UsageError("--from-profile serves a profile file; it takes no --server, --root, "
                                        "--since or --until")
        if profile_out is not None:
            raise mcpeval_nb.UsageError("choose --profile (write) or --from-profile (serve), not both")
        profile = mcpeval_nb.load_profile(profile_in)
    elif server is None:
        raise mcpeval_nb.UsageError("--server LABEL or --from-profile FILE is required")
    elif profile_out is not None:
        profile, path = mcpeval_nb.export_mock_profile(root, profile_out, server=server, since=since,
                                                       until=until)
        click.echo(f"wrote mock profile of {profile.server} ({len(profile.tools)} tools, {profile.calls} "
                   f"recorded calls) to {path}")
        return 0
    else:
        profile = mcpeval_nb.mock_profile(root, server=server, since=since, until=until)
    return mcpeval_nb.run_mock(profile, mcpeval_nb.MockOptions(seed=seed, speed=speed, listen=listen))


class _Progress:
    """One stderr line per tenth of the calls made."""

    def __init__(self) -> None:
        self.shown = 0

    def __call__(self, done: int, total: int, row: mcpeval_nb.CallSize) -> None:
        tenth = done * 10 // max(total, 1)
        if tenth > self.shown:
            self.shown = tenth
            click.echo(f"replay [{done}/{total}]", err=True)


@click.command("replay", epilog=opt.example(
    "mcpeval-nb replay --server docs --manifest mcp-eval.manifest.json -- python -m docs_server",
    "mcpeval-nb replay --server docs --sample 500 --manifest m.json --format junit --url "
    "http://127.0.0.1:8000/mcp > replay.xml"))
@opt.server("The recorded server whose traffic is replayed (its label; also the synthetic records').")
@opt.root
@_window
@click.option("--sample", type=int, default=200, show_default=True,
              help="Calls to draw from the recorded mix.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option("--manifest", required=True, type=click.Path(dir_okay=False),
              help="Probe manifest: which tools may be called (their cases' access) and the fill values of "
                   "the placeholders.")
@opt.output_format("text", "json", "junit")  # literal: the tables load pyarrow (tests/test_render.py checks)
@opt.allow_mutation
@opt.allow_remote_http
@opt.protocol
@opt.url
@opt.command_argument
def replay_cmd(server: str, root: str | None, since: str | None, until: str | None, sample: int, seed: int,
               manifest: str, fmt: str, allow_mutation: bool, allow_remote_http: bool, protocol: str,
               url: str | None, command: tuple[str, ...]) -> int:
    """Replay the recorded traffic's shape mix against a new build and compare per tool: failure rates
    (Wilson intervals), error codes and templates, latency p50/p95 (bootstrap intervals).

    Exit 1 when any tool regressed, 3 when the build could not be reached.
    """
    target = opt.target_of(url, command, allow_remote_http=allow_remote_http)
    report = mcpeval_nb.replay(target, server=server, manifest=manifest, root=root, since=since, until=until,
                               sample=sample, seed=seed, allow_mutation=allow_mutation,
                               allow_remote_http=allow_remote_http, protocol=protocol, progress=_Progress())
    click.echo(mcpeval_nb.render(report, fmt), nl=False)
    return report.exit_code


@click.command("mock-profile",
               epilog=opt.example("mcpeval-nb schema mock-profile > mock-profile.schema.json"))
def schema_mock_profile_cmd() -> int:
    """Print the mcpeval-nb.mock-profile/v1 JSON Schema (what `mock --profile` writes)."""
    click.echo(mcpeval_nb.profile_schema_text(), nl=False)
    return 0


COMMANDS = (mock_cmd, replay_cmd)
SCHEMA_COMMANDS: tuple[Any, ...] = (schema_mock_profile_cmd,)
