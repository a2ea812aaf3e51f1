"""Run report of a recorded bag (docs/report.md): ``series`` reads the bag once, ``metrics``
computes each section's figures, ``figures`` draws them (inline SVG), ``html`` writes the self-contained page,
``build.make_report`` does all four; `kinodyn report BAG` (``cli``) and the demo call it."""
