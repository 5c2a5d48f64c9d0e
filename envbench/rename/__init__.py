"""The renaming: linking, fine types, candidates, the per-entity engine, alias-wise substitution, NUM and
TIME, demonyms, articles, gender, novel names, the audit, the ``generate`` step and locks."""
