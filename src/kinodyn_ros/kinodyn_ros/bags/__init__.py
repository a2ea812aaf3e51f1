"""rosbag2 bags through rosbags: write, read by stored definitions, record, play, info (docs/bags.md)."""

from kinodyn_ros.bags.reader import BagError, open_bag, read_messages
from kinodyn_ros.bags.typestore import installed_typestore
from kinodyn_ros.bags.writer import BagWriter

__all__ = ["BagError", "BagWriter", "installed_typestore", "open_bag", "read_messages"]
