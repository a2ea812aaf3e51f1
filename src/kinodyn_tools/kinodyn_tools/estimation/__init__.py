"""`kinodyn estimate`: the estimator run offline over a bag (docs/offline-estimation.md)."""
