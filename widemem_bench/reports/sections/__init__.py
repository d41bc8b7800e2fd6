"""One report section per experiment: `reports/sections/<experiment>.py` renders (markdown,
figures) from the run's record and saved tables; the experiment module only computes.

Each module registers `@report_section("<experiment>")`; `experiments.registry.
get_report_sections` imports the module of every experiment that has one.
"""
