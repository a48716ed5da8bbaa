"""Analysis of position tables: distances between positions, table comparison, convention
identification and the property report. Pure numpy: no CLI, no rich, no matplotlib.

>>> import pecli
>>> from pecli.analysis import offset_profile
>>> profile = offset_profile(pecli.encode("count", 5, 4, dtype="float64"), "euclidean")
>>> profile.mean.tolist()
[0.0, 2.0, 4.0, 6.0, 8.0]
"""

from __future__ import annotations

from pecli.analysis.compare import Comparison, Diagnosis, compare_tables, diagnose
from pecli.analysis.distance import (
    METRICS,
    OffsetProfile,
    check_metric,
    distance_blocks,
    distance_matrix,
    offset_profile,
)
from pecli.analysis.identify import Candidate, Identification, identify_table
from pecli.analysis.properties import PROPERTIES, PropertyCheck, check_properties
from pecli.analysis.relative import alibi_profile, rope_profile, rope_score_matrix, rope_scores
from pecli.analysis.wavelengths import rope_wavelengths

__all__ = [
    "METRICS",
    "PROPERTIES",
    "Candidate",
    "Comparison",
    "Diagnosis",
    "Identification",
    "OffsetProfile",
    "PropertyCheck",
    "alibi_profile",
    "check_metric",
    "check_properties",
    "compare_tables",
    "diagnose",
    "distance_blocks",
    "distance_matrix",
    "identify_table",
    "offset_profile",
    "rope_profile",
    "rope_score_matrix",
    "rope_scores",
    "rope_wavelengths",
]
