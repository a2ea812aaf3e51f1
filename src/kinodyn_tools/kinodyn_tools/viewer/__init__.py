"""The viewer node's scene: URDF primitives, overlays, and their two renderings (browser and MarkerArray).

``scene`` builds one description of what is drawn (``Scene``); ``browser`` draws it with viser, ``markers``
turns it into a ``visualization_msgs/MarkerArray``, so the browser and RViz never disagree
(docs/nodes/viewer.md).
"""
