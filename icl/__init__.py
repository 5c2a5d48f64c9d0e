"""In-context learning for DocRE: prompt templates and builder (with DA and CG), chat-completions client,
answer parser.

Nothing here imports torch or transformers: the client speaks HTTP with the standard library.
"""
