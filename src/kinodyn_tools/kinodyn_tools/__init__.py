"""kinodyn tooling around the nodes: the `kinodyn` graph launcher, bags, reports, scenarios, the demo,
the viewer and offline estimation."""
