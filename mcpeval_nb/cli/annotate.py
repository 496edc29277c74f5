"""``mcpeval-nb annotate``: record a typed remark about a captured call (SPEC 2.5, 5)."""

from __future__ import annotations

import click

import mcpeval_nb

from . import options as opt


@click.command("annotate",
               epilog=opt.example('mcpeval-nb annotate --session <session> --seq 7 --kind false-success '
                                  '--note "reported success, nothing changed"'))
@click.option("--session", required=True, help="Raw session value or stored session:<hex> token.")
@click.option("--seq", type=click.IntRange(min=0), default=None, help="The call's sequence number.")
@click.option("--event-id", default=None, metavar="UUID",
              help="The call record's event id (the newer target form; --seq becomes optional).")
@click.option("--kind", required=True, help="One of: " + ", ".join(mcpeval_nb.ANNOTATION_KINDS) + ".")
@click.option("--note", required=True, help="At most 240 characters, no control characters.")
@opt.root
def annotate_cmd(session: str, seq: int | None, event_id: str | None, kind: str, note: str,
                 root: str | None) -> int:
    """Append an annotation to annotations-<day>.jsonl (target: --seq, --event-id, or both)."""
    record = mcpeval_nb.annotate(session, seq, kind, note, root=root, event_id=event_id)
    target = "" if record.seq is None else f" seq {record.seq}"
    target += "" if record.event_id is None else f" event {record.event_id}"
    click.echo(f"recorded {record.kind} annotation for {record.session}{target}")
    return 0


COMMANDS = (annotate_cmd,)
