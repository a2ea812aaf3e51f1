"""Compiled (numba, on-disk cached) kernels over the packed model arrays ``Model.kernel_data``."""
