"""The robustness report: a model on the original benchmark versus its renamed (Env) twin.

Reproduces the paper's analyses side by side: precision/recall change (Table 2), intra/inter
F1 (Table 3), F1 by number of entities with linear-fit slopes (Figure 4), popularity of the
renamed entities per type (Table 4), names seen in training per type (Table 5), substitution
rates (Table 1), plus the consistency rate per relation.

- ``analyses``: one function per analysis, plain data in and out;
- ``markdown``: report.md from report.json's content;
- ``plots``: the two PNG plots;
- ``build``: ``make_report``, which reads the inputs, runs the analyses and writes the folder.
"""

from envbench.scoring.report.analyses import (
    ENTITY_BUCKETS,
    TABLE2_KEYS,
    TABLE3_KEYS,
    TYPES,
    consistency_rate,
    linear_slope,
    popularity,
    quartiles,
    slice_scores,
)
from envbench.scoring.report.build import REPORT_FILES, ReportResult, make_report
from envbench.scoring.report.markdown import render_markdown

__all__ = ["ENTITY_BUCKETS", "REPORT_FILES", "TABLE2_KEYS", "TABLE3_KEYS", "TYPES", "ReportResult",
           "consistency_rate", "linear_slope", "make_report", "popularity", "quartiles", "render_markdown",
           "slice_scores"]
