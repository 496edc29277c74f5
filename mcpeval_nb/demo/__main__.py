"""``python -m mcpeval_nb.demo``."""

import sys

from . import main

sys.exit(main())
