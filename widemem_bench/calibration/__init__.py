"""Per-model confidence-threshold calibration (Learn-then-Test) and committed calibration files."""

from widemem_bench.calibration.figures import answerability_section, band_figures
from widemem_bench.calibration.file import (
    CalibrationFile,
    CalibrationNotFoundError,
    available_calibrations,
    bands_from_fit,
    calibration_dir,
    env_lines,
    load_calibration,
    read_calibration,
    save_calibration,
)
from widemem_bench.calibration.ltt import (
    BANDS,
    DEFAULT_DELTA,
    DEFAULT_TARGETS,
    BandFit,
    ThresholdFit,
    assign_bands,
    binomial_p_value,
    clopper_pearson_lower,
    fit_thresholds,
    hb_p_value,
)

__all__ = [
    "BANDS",
    "DEFAULT_DELTA",
    "DEFAULT_TARGETS",
    "BandFit",
    "CalibrationFile",
    "CalibrationNotFoundError",
    "ThresholdFit",
    "answerability_section",
    "assign_bands",
    "available_calibrations",
    "band_figures",
    "bands_from_fit",
    "binomial_p_value",
    "calibration_dir",
    "clopper_pearson_lower",
    "env_lines",
    "fit_thresholds",
    "hb_p_value",
    "load_calibration",
    "read_calibration",
    "save_calibration",
]
