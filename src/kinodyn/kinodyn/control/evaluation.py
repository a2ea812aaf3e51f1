from kinodyn.evaluation import Evaluation, Evaluator  # noqa: F401  (moved to kinodyn.evaluation; old path for callers outside the core)
