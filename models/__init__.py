"""DocRE models (ATLOP, DocuNet, KD-DocRE), EVRT training, prediction and the DocRED-HWE attribution measure (the [train] extra)."""
