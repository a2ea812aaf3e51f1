"""Direct calls of compiled kernels from Python: the one place that uses numba internals.

A numba dispatcher works out the argument types on every call (~0.3-0.5 us for the 4-7 array
arguments of a kernel), about the cost of a small kernel itself. ``Kernel`` compiles (or loads
from the on-disk cache) one overload for a fixed signature and then calls that overload's
``entry_point`` (``Dispatcher.compile(signature)`` returns it; numba is pinned at 0.68.1), which
only unboxes the arguments (~0.1 us).

The entry point does *not* check its arguments against the signature: callers must pass exactly
the declared types. The public functions guarantee it, having checked their inputs first
(``Model.check_q``, ``kinodyn.inputs``): model arrays ``(ki, kf)`` from
``model.kernel_data``; inputs as float64 arrays of the declared dimension (any strides: layout
``A``); outputs as C-contiguous float64 arrays the caller allocated; Python ints and bools.

``address(array)`` and ``element_address(array, i)`` (compiled code only) give the addresses a C function
called from compiled code takes (``numba.types.ExternalFunction``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

if TYPE_CHECKING:
    from collections.abc import Callable

    from numba.core.dispatcher import Dispatcher

KI = types.Array(types.int64, 1, "C", readonly=True)
KF = types.Array(types.float64, 1, "C", readonly=True)
IN1 = types.Array(types.float64, 1, "A")
IN2 = types.Array(types.float64, 2, "A")
OUT1 = types.Array(types.float64, 1, "C")
OUT2 = types.Array(types.float64, 2, "C")
OUT3 = types.Array(types.float64, 3, "C")
INT = types.int64
FLOAT = types.float64
BOOL = types.boolean


class Kernel:
    """``kernel.call(*args)``: the overload of ``dispatcher`` for ``argtypes``, without type dispatch.

    The first call compiles (or loads from the numba cache) and replaces ``call`` by the entry point.
    """

    __slots__ = ("_argtypes", "_dispatcher", "call")

    def __init__(self, dispatcher: Dispatcher, *argtypes: types.Type) -> None:
        self._dispatcher = dispatcher
        self._argtypes = argtypes
        self.call: Callable[..., Any] = self._compile_and_call

    def _compile_and_call(self, *args: Any) -> Any:  # noqa: ANN401  (numba's entry points, typing and codegen objects have no types)
        self.call = self._dispatcher.compile(self._argtypes)
        return self.call(*args)


def _address_of(typingctx: Any, array: types.Array) -> tuple[Any, Any]:  # noqa: ANN401  (numba's entry points, typing and codegen objects have no types)
    """The address of ``array``'s first element (of a view: where the view starts)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:  # noqa: ANN401  (numba's entry points, typing and codegen objects have no types)
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.bitcast(data, cgutils.voidptr_t)
    return types.voidptr(array), codegen


def _element_address_of(typingctx: Any, array: types.Array, index: types.Integer) -> tuple[Any, Any]:  # noqa: ANN401  (numba's entry points, typing and codegen objects have no types)
    """The address of entry ``index`` of the 1-D contiguous ``array``."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:  # noqa: ANN401  (numba's entry points, typing and codegen objects have no types)
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.bitcast(builder.gep(data, [args[1]]), cgutils.voidptr_t)
    return types.voidptr(array, index), codegen


address: Any = intrinsic(_address_of)
element_address: Any = intrinsic(_element_address_of)
