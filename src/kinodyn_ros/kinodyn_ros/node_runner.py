"""Run one node as a process: a bad configuration is one error line and exit code 1, Ctrl-C is exit code 0."""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from kinodyn_ros.parameters import reject_undeclared_parameters
from kinodyn_ros.robot_description import RobotDescriptionError

CONFIGURATION_ERRORS = (RobotDescriptionError, ValueError, ParameterException)
"""What a node constructor raises for bad parameters (wrong value or type) or a bad URDF (kinodyn's
URDFError is a ValueError)."""


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_node(name: str, make_node: Callable[[], Node], args: list[str] | None = None,
             stop_before_shutdown: bool = False) -> int:
    """Create the node with ``make_node`` and spin it until shutdown; returns the process exit code.

    A configuration error raised while the node is built, or a parameter given to it that it does not declare
    (``reject_undeclared_parameters``), is logged as one line under ``name`` (no traceback) and gives exit
    code 1.

    rclpy's own Ctrl-C handler shuts the context down first and only then runs ``on_shutdown`` callbacks, so
    a node with threads of its own that publish (the control loop) would publish on a dead context. With
    ``stop_before_shutdown`` SIGINT and SIGTERM raise ``KeyboardInterrupt`` in the spinning thread instead
    (within one wake-up of the executor: such a node needs a timer), and ``destroy_node`` runs (stopping the
    threads) before the context is shut down.
    """
    if stop_before_shutdown:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        signal.signal(signal.SIGINT, _raise_keyboard_interrupt)
        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    else:
        rclpy.init(args=args)
    node = None
    configured = False
    try:
        node = make_node()
        reject_undeclared_parameters(node)
        configured = True
        rclpy.spin(node)
    except CONFIGURATION_ERRORS as exc:
        if configured:
            raise
        rclpy.logging.get_logger(name).error(f"{exc}; exiting")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except rclpy_implementation.RCLError:
        if rclpy.ok():
            raise
        # Ctrl-C shut the context down while a callback was publishing: that is a normal stop.
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
