"""Gradient-boosted trees as JSON numbers: moved down to :mod:`widemem_bench.engine.trees`
(issue 26: the structure resolver's pair scorer uses them, and the engine may not import
answerability/). Kept here so answerability's imports keep working."""

from widemem_bench.engine.trees import MODEL_KIND, TreeModel, fit_trees

__all__ = ["MODEL_KIND", "TreeModel", "fit_trees"]
