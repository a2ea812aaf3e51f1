"""One module per node; each declares its parameters, converts messages and calls the core."""
