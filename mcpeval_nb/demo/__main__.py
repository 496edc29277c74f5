"""``python -m mcpeval_nb.demo`` (it leaves as the CLI does: ``cli.leave``)."""

from mcpeval_nb.cli.leave import leave

from . import main

leave(main())
