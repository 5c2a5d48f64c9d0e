"""Prompt templates: the wording, how entities are numbered and marked, and how triples are written.

Two templates:

``paper`` (the default) follows the ICL prompt of Meng et al. (ACL Findings 2024, "On the
Robustness of Document-Level Relation Extraction Models to Entity Name Variations", Appendix A).
What of it could be checked, and against what:

* **Quoted from Appendix A** (by the issue that asked for this template; the appendix itself could not
  be read here): "any two different entities", "based on the context", "Each relation triple should
  be output only once", the 96 relation names "separated by semicolons", the answer form
  ``<subject entity number; relation type; object entity number>``, the sentence "Before the test
  document, an example document and its expected output are provided.", and the headers
  "Example document:", "All relation triples extracted from the document:" and "Test document:".
* **From the paper's reference code** (THU-BPM/Env-DocRE, ``icl/inference.py`` and
  ``icl/evaluation.py``): the system message "You are a helpful assistant.", temperature 0 and
  1024 answer tokens; answers are read one triple per line as ``<[h]; relation; [t]>``, and entity
  number N is vertexSet index N-1 (so entities are numbered in vertexSet order, and the numbers are
  written in square brackets).
* **Not verified** (written to fit the above, marked ``# unverified`` below): the exact wording that
  joins the quoted phrases into sentences, the numbering sentence, the plural forms, where the
  number stands beside a mention, and the CG paragraph. Replace them with the appendix text when
  it is at hand; ``TEMPLATE_SHA256`` changes with any wording, so old prompt folders rebuild.

``envbench-v1`` is the harness's first template, byte for byte: entities numbered by first
mention, mentions enclosed as ``<eN>...</eN>``, one relation name per line, headers "Example 1:",
"Relations:", and "If no relation holds, write None."
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envbench.core.relations import RELATIONS
from etl.io import dumps_json, sha256_bytes

# ---------------------------------------------------------------------------------------------- paper
PAPER_SYSTEM = "You are a helpful assistant."  # the reference code's system message

PAPER_INSTRUCTION = (
    # unverified wording around the quoted "any two different entities" and "based on the context"
    "Please extract all relation triples between any two different entities from the document based on the "
    "context. "
    # the 96 names separated by semicolons (quoted); the lead-in is unverified
    "The relation types are: {relations}. "
    # unverified: the numbering sentence
    "The entities in the document are numbered, and each mention of an entity is followed by its number in "
    "square brackets. "
    "{examples_sentence} "
    # quoted: "Each relation triple should be output only once" and the answer form
    "Each relation triple should be output only once, in the form of "
    "<subject entity number; relation type; object entity number>."
)
PAPER_EXAMPLES_ONE = "Before the test document, an example document and its expected output are provided."  # quoted
PAPER_EXAMPLES_MANY = ("Before the test document, some example documents and their expected outputs are "
                       "provided.")  # unverified plural form
PAPER_CG_ONE = (  # unverified: the CG paragraph for one pair
    "The two example documents differ only in entity names, so their relation triples are the same. "
    "The relation triples should be extracted based on the context, not on the entity names."
)
PAPER_CG_MANY = (  # unverified: the CG paragraph for several pairs
    "The example documents come in pairs, and the two documents of each pair differ only in entity names, "
    "so their relation triples are the same. The relation triples should be extracted based on the context, "
    "not on the entity names."
)
PAPER_EXAMPLE_HEADER = "Example document:"  # quoted
PAPER_ANSWER_HEADER = "All relation triples extracted from the document:"  # quoted
PAPER_TEST_HEADER = "Test document:"  # quoted

# ---------------------------------------------------------------------------------------- envbench-v1
V1_INSTRUCTION = (
    "Task: document-level relation extraction. Read the document and list the relations that hold "
    "between its entities.\n"
    "The entities are numbered 1, 2, 3, ... in order of their first mention, and every mention of an "
    "entity is enclosed in tags carrying its number: <e1>Willi Schneider</e1> ... <e1>Schneider</e1> "
    "are two mentions of entity 1.\n"
    "Use only these {n} relation types:\n{relations}\n"
    "Write one relation per line in the form <head entity number; relation type; tail entity number>, "
    "for example <1; country of citizenship; 2>. List every relation the document states or implies, "
    "and write nothing else. If no relation holds, write None."
)
V1_CG_PARAGRAPH = (
    "The examples come in pairs (a and b). The two documents of a pair differ only in the names of "
    "their entities, and therefore their relations are exactly the same. Your output must not depend on "
    "entity names either: base every relation on what the context says, not on the entities themselves "
    "or on what you know about them."
)


@dataclass(frozen=True)
class Example:
    """One demonstration as the template shows it: its rendered text and its triple lines."""

    text: str
    triples: list[str]
    pair: int  # 1-based demonstration number
    twin: bool | None  # None without DA; False for the original, True for its renamed twin


@dataclass(frozen=True)
class Template:
    """How one template numbers, marks, writes triples and lays out the prompt."""

    name: str
    numbering: str  # "first-mention" or "vertexset"
    marking: str  # "tags" (<eN>mention</eN>) or "brackets" (mention [N])
    system: str | None  # the template's own system message (--system overrides it)
    triple: Callable[[int, str, int], str]
    layout: Callable[[list[Example], str, bool], str]

    @property
    def sha256(self) -> str:
        """A hash of every fixed text of the template: a change of wording rebuilds old prompt folders."""
        texts = {k: v for k, v in globals().items() if k.startswith(("PAPER_", "V1_")) and isinstance(v, str)}
        prefix = "PAPER_" if self.name == "paper" else "V1_"
        return sha256_bytes(dumps_json({"name": self.name, "numbering": self.numbering, "marking": self.marking,
                                        "texts": {k: v for k, v in sorted(texts.items()) if k.startswith(prefix)}}))


def _paper_layout(examples: list[Example], test_text: str, cg: bool) -> str:
    many = len(examples) > 1
    instruction = PAPER_INSTRUCTION.format(
        relations="; ".join(RELATIONS.values()),
        examples_sentence=PAPER_EXAMPLES_MANY if many else PAPER_EXAMPLES_ONE,
    )
    if not examples:  # zero-shot: the sentence about examples would be false
        instruction = instruction.replace(PAPER_EXAMPLES_ONE + " ", "")
    parts = [instruction]
    if cg:
        parts.append(PAPER_CG_MANY if len(examples) > 2 else PAPER_CG_ONE)
    for ex in examples:
        parts.append(f"{PAPER_EXAMPLE_HEADER}\n{ex.text}\n{PAPER_ANSWER_HEADER}\n" + "\n".join(ex.triples))
    parts.append(f"{PAPER_TEST_HEADER}\n{test_text}\n{PAPER_ANSWER_HEADER}")
    return "\n\n".join(parts)


def _v1_layout(examples: list[Example], test_text: str, cg: bool) -> str:
    parts = [V1_INSTRUCTION.format(n=len(RELATIONS), relations="\n".join(RELATIONS.values()))]
    if cg:
        parts.append(V1_CG_PARAGRAPH)
    for ex in examples:
        label = f"Example {ex.pair}" if ex.twin is None else f"Example {ex.pair}{'b' if ex.twin else 'a'}"
        parts.append(f"{label}:\nDocument: {ex.text}\nRelations:\n" + ("\n".join(ex.triples) or "None"))
    parts.append(f"Test document:\nDocument: {test_text}\nRelations:")
    return "\n\n".join(parts)


TEMPLATES: dict[str, Template] = {
    "paper": Template("paper", "vertexset", "brackets", PAPER_SYSTEM,
                      lambda h, r, t: f"<[{h}]; {r}; [{t}]>", _paper_layout),
    "envbench-v1": Template("envbench-v1", "first-mention", "tags", None,
                            lambda h, r, t: f"<{h}; {r}; {t}>", _v1_layout),
}
DEFAULT_TEMPLATE = "paper"

__all__ = ["DEFAULT_TEMPLATE", "Example", "PAPER_SYSTEM", "TEMPLATES", "Template", "V1_CG_PARAGRAPH"]
