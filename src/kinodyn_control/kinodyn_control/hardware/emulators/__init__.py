"""Emulated devices written in the project, speaking the real protocols: they drive the hardware components in
tests and benchmarks (mit_motor.py: MIT-mode CAN motors; slcan_pty.py: a serial CAN adapter on a
pseudo-terminal, so a driver in another process reaches the emulated motors; unix_can.py: the python-can
interface ``kinodyn_unixcan``, SocketCAN frames to devices in another process)."""
