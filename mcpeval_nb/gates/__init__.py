"""Traffic gates: budgets over captured calls (``mcpeval-nb gate``), judged from the analysis functions.

The package is ``gates`` so that ``mcpeval_nb.gate`` stays the one library function.

* ``budgets``: the budgets file, its published schema and the most specific entry per (server, tool);
* ``baseline``: the error templates a share envelope or a Parquet export knows;
* ``evaluate``: ``gate(root, budgets, since=, baseline=)``, the one call the command makes;
* ``report``: ``GateReport`` and its text, markdown, JSON and JUnit renderings.

Nothing is imported here: ``mcpeval-nb schema budgets`` loads ``budgets`` alone, without the tables
and analysis layers ``evaluate`` needs (the public names are exported by ``mcpeval_nb``).
"""

from __future__ import annotations

__all__: list[str] = []
