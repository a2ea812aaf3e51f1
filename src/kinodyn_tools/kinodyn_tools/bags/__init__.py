"""rosbag2 bags: write (MCAP chunks that reach the disk as they fill), read by stored definitions (damaged
or cut files too), record, play, info, reindex (docs/bags.md)."""

from kinodyn_tools.bags.reader import BagError, open_bag, read_messages
from kinodyn_tools.bags.typestore import installed_typestore
from kinodyn_tools.bags.writer import BagWriter

__all__ = ["BagError", "BagWriter", "installed_typestore", "open_bag", "read_messages"]
