"""One on-disk location per kinodyn module for the numba cache, whatever path the module was imported from.

numba's ``NUMBA_CACHE_DIR`` locator files a kernel under a hash of its source file's directory, so the same
file imported as ``src/kinodyn/kinodyn/x.py`` (``scripts/setup.sh``'s warm-up) and as
``build/kinodyn/kinodyn/x.py`` (colcon's symlink install, which the nodes import) got two caches, and the
nodes compiled again what setup had compiled. kinodyn's kernels are filed under their module's package name
instead. Nothing stale can load: numba checks every cache index against the source file's modification time
and size, which the two paths share (colcon's symlinks point at the same file).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from numba.core import config
from numba.core.caching import CacheImpl, UserProvidedCacheLocator

if TYPE_CHECKING:
    from types import FunctionType

PACKAGE = "kinodyn"


class PackageCacheLocator(UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR/<package of the function's module>`` for functions of kinodyn's modules."""

    def __init__(self, py_func: FunctionType, py_file: str) -> None:
        super().__init__(py_func, py_file)  # type: ignore[no-untyped-call]  # numba's caching API is unannotated
        self._cache_path = os.path.join(config.CACHE_DIR,  # type: ignore[attr-defined]
                                        py_func.__module__.rpartition(".")[0])

    @classmethod
    def from_function(cls, py_func: FunctionType, py_file: str) -> PackageCacheLocator | None:
        if not py_func.__module__.startswith(PACKAGE + "."):
            return None  # other libraries' functions: numba's own locators
        locator: PackageCacheLocator | None = super().from_function(py_func, py_file)  # type: ignore[no-untyped-call]
        return locator


# On import (kinodyn/__init__.py imports this module first, before any kernel is decorated): numba's list of
# locators, tried in order, has no public registration.
if PackageCacheLocator not in CacheImpl._locator_classes:  # noqa: SLF001
    CacheImpl._locator_classes.insert(0, PackageCacheLocator)  # noqa: SLF001
