"""``python -m kinodyn_ros.scenario``: kinodyn_ros.scenario.cli."""

import sys

from kinodyn_ros.scenario.cli import main

sys.exit(main())
