"""``python -m bgbot.cli COMMAND ...``: the same as ``bgbot COMMAND ...``."""

import sys

from . import main

sys.exit(main())
