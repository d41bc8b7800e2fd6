"""Markdown report sections of the experiments, one module per experiment.

A module registers its writer with `experiments.registry.report_section`; the
experiment module imports it, so the registry finds it with the experiment.
"""
