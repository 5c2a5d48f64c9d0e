"""envbench: entity-renamed DocRE benchmarks (Env-DocRED, Env-Re-DocRED) built offline, and scoring on them.

One folder per job: ``core`` and ``formats`` below, then ``worlds``, ``rename`` and ``scoring``, and ``cli`` on
top. Training (ATLOP, EVRT, understanding) is in ``models/``, in-context learning in ``icl/``.
"""

__version__ = "0.1.0"
