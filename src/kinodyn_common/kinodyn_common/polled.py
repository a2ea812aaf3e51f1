"""Subscriptions read when their owner wants, not as messages arrive: for a consumer slower than its input.

A node that draws or summarises at a few tens of hertz needs only the newest message of a 500 Hz topic (or
the few since its last look). An executor would run a Python callback for every message only to keep the
last one; here the middleware keeps them (KEEP_LAST ``depth``: the newest ``depth`` messages, the older ones
overwritten) and the owner takes them when it looks (``newest``, ``all``), so nothing of this process's
Python runs per message, as rclcpp's ``Subscription::take`` on a callback group no executor spins does.

rclpy's executors take from every subscription of the nodes they spin, so these subscriptions live on a
helper node of the same context that no executor spins: hidden (its name starts with ``_``, which ``ros2
node list`` leaves out), without parameter services, /rosout or the process's command-line arguments. Topic
names are resolved by the owner (its namespace and remappings) and given to the helper fully qualified, so a
polled topic is the one the owner would have subscribed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rclpy.node import Node

if TYPE_CHECKING:
    from rclpy.qos import QoSProfile
    from rclpy.subscription import Subscription


def _not_called(_msg: object) -> None:
    """The helper's subscription callback: no executor spins the helper, so none runs it."""


class PolledSubscriptions:
    """Subscriptions of ``owner``'s topics that no executor takes from (module docstring)."""

    def __init__(self, owner: Node) -> None:
        self._owner = owner
        self._node = Node(f"_{owner.get_name()}_polled", namespace=owner.get_namespace(),
                          context=owner.context, use_global_arguments=False, enable_rosout=False,
                          start_parameter_services=False)

    def subscribe(self, msg_type: type, topic: str, qos: QoSProfile, raw: bool = False) -> Subscription[Any]:
        """A subscription of ``topic`` as the owner names it (resolved by the owner), kept by the middleware
        until taken; ``raw``: taken as the serialized bytes."""
        return self._node.create_subscription(msg_type, self._owner.resolve_topic_name(topic), _not_called,
                                              qos, raw=raw)

    @staticmethod
    def take(subscription: Subscription[Any]) -> Any | None:  # noqa: ANN401  (the subscription's message type, or bytes when raw)
        """The oldest message ``subscription`` holds (the message, or its bytes when raw), None when it holds
        none."""
        with subscription.handle:
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
        return None if taken is None else taken[0]

    @staticmethod
    def received(subscription: Subscription[Any]) -> list[tuple[int, Any]]:
        """Every message ``subscription`` holds, oldest first, each with its reception time: the middleware's
        ``received_timestamp`` (ns of the system clock, taken as the message arrived), 0 where the middleware
        gives none."""
        messages = []
        handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
        with handle:
            while (taken := handle.take_message(msg_type, raw)) is not None:
                messages.append((int(taken[1].get("received_timestamp") or 0), taken[0]))
        return messages

    def newest(self, subscription: Subscription[Any]) -> Any | None:  # noqa: ANN401  (as take)
        """The newest message ``subscription`` holds, every older one dropped; None when it holds none."""
        newest = None
        while (taken := self.take(subscription)) is not None:
            newest = taken
        return newest

    def all(self, subscription: Subscription[Any]) -> list[Any]:
        """Every message ``subscription`` holds, oldest first."""
        messages = []
        while (taken := self.take(subscription)) is not None:
            messages.append(taken)
        return messages

    def destroy(self) -> None:
        """Destroy the helper node and its subscriptions."""
        self._node.destroy_node()
