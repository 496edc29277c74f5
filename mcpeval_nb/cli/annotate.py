"""``mcpeval-nb annotate``: record a typed remark about a captured call (SPEC 5)."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt


@click.command("annotate",
               epilog=opt.example('mcpeval-nb annotate --session <session> --seq 7 --kind false-success '
                                  '--note "reported success, nothing changed"'))
@click.option("--session", required=True, help="Raw session value or stored session:<hex> token.")
@click.option("--seq", required=True, type=click.IntRange(min=0), help="The call's sequence number.")
@click.option("--kind", required=True, help="One of: " + ", ".join(mcpeval_nb.ANNOTATION_KINDS) + ".")
@click.option("--note", required=True, help="At most 240 characters, no control characters.")
@opt.root
def annotate_cmd(session: str, seq: int, kind: str, note: str, root: str | None) -> int:
    """Append an annotation to annotations-<day>.jsonl."""
    record = mcpeval_nb.annotate(session, seq, kind, note, root=root)
    click.echo(f"recorded {record.kind} annotation for {record.session} seq {record.seq}")
    return 0


COMMANDS = (annotate_cmd,)
