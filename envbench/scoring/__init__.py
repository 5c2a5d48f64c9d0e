"""Scoring predictions: the official DocRE metrics, end-to-end scores, ``evaluate``, ``report``, ``explore``,
and DocRED-HWE's MAP(K)."""
