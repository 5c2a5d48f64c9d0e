"""What several jobs share, each defined once: errors, option checks, notes, kept reasons, coarse types,
the DocRED relations, seeding, the tokenizer, gender."""
