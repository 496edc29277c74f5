"""``python -m mcpeval_nb`` runs the CLI."""

from mcpeval_nb.cli.leave import entry

entry()
