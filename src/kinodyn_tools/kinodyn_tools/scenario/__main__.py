"""``python -m kinodyn_tools.scenario``: kinodyn_tools.scenario.cli."""

import sys

from kinodyn_tools.scenario.cli import main

sys.exit(main())
