"""File formats, each with its schema, reader and writer together: DocRED, Linked-DocRED, link files,
predictions (relations and end-to-end), ``substitutions.parquet``, Hugging Face ``datasets`` folders."""
