"""Prompt templates: the wording, how entities are numbered and marked, and how triples are written.

Two templates:

``paper`` (the default) is the in-context-learning prompt of Meng et al. (ACL Findings 2024, "On the
Robustness of Document-Level Relation Extraction Models to Entity Name Variations"), **Appendix A,
word for word** (``tests/icl/data/paper_appendix_a.txt`` is the appendix's text, and a test
compares the rendered 1-shot prompt with it). The consistency-guidance paragraph is the one the
paper quotes in Section 7.4 ("The only difference between two documents lies in the entity
names. ..."), word for word. From the paper's reference code (THU-BPM/Env-DocRE, ``icl/inference.py``
and ``icl/evaluation.py``): the system message "You are a helpful assistant.", temperature 0 and 1024
answer tokens, and triples written ``<[h]; relation; [t]>`` (the form its scorer reads).

What the appendix leaves open, and what envbench chose:

* **Layout.** The appendix's paragraphs, each header and each block on its own, are separated by
  blank lines, as the appendix prints them.
* **Numbering.** "Entities in the document are numbered in the order of their first mention": by
  (sentence, start token), a longer span first when two start together, the vertexSet index
  breaking ties. (The reference scorer reads number N as vertexSet index N-1; the two orders differ
  in 10 of the 500 Re-DocRED test documents, and ``entity_map`` maps numbers back either way.)
* **Marking.** "each entity mention is enclosed in the corresponding entity number": the number in
  square brackets on both sides of the mention, ``[1] Loud Tour [1]``, the brackets the answer form's
  ``[h]`` uses. One setting: ``Template.marking`` "enclosed".
* **Plural forms.** The appendix shows the 1-shot prompt, with one example document. With more
  example documents (3-shot, or DA, which adds a renamed twin per demonstration), only what number
  forces changes, two places: "an example document and its expected output are provided" ->
  "example documents and their expected outputs are provided", and "in the same format as the
  example" -> "in the same format as the examples". The CG paragraph speaks of "two documents" and
  is kept as quoted for every shot count (the paper quotes one paragraph for all its settings).
* **Zero-shot** (not in the paper): the sentence about the example and the clause "in the same format
  as the example, i.e.," are left out, since no example is shown.
* **Where CG goes.** The paper says that CG "expands the prompt"; its paragraph stands after the
  instruction, before the first example.

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

# Appendix A, verbatim; {relations} are the 96 names joined by "; ", the two other fields are below
PAPER_INSTRUCTION = (
    "Given a document in which all entity mentions have been marked, please identify all relation types "
    "between any two different entities based on the context of the document. The scope of target relation "
    "types for identification is limited to these 96 types (separated by semicolons): {relations}. Entities "
    "in the document are numbered in the order of their first mention, and each entity mention is enclosed "
    "in the corresponding entity number. {examples_sentence}Please output the extraction results of the test "
    "document{format_clause} each line outputs an extracted relation triple, and the format of each triple is: "
    "<subject entity number; relation type; object entity number>. Each relation triple should be output "
    "only once."
)
PAPER_EXAMPLES_ONE = "Before the test document, an example document and its expected output are provided. "
PAPER_EXAMPLES_MANY = "Before the test document, example documents and their expected outputs are provided. "  # plural
PAPER_FORMAT_ONE = " in the same format as the example, i.e.,"
PAPER_FORMAT_MANY = " in the same format as the examples, i.e.,"  # plural
PAPER_FORMAT_NONE = ":"  # zero-shot: no example to point at
# Section 7.4, verbatim (the paper quotes it between double quotes)
PAPER_CG = (
    "The only difference between two documents lies in the entity names. Apart from the entities, the "
    "contextual content of the two documents is entirely the same. Therefore, the expected outputs for the "
    "two documents are also identical. When extracting relation triples from the test document, please base "
    "the extraction on the context of the document and avoid identifying the relations solely based on the "
    "information of the entities themselves."
)
PAPER_EXAMPLE_HEADER = "Example document:"
PAPER_ANSWER_HEADER = "All relation triples extracted from the document:"
PAPER_TEST_HEADER = "Test document:"

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
    marking: str  # "tags" (<eN>mention</eN>), "enclosed" ([N] mention [N]) or "brackets" (mention [N])
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
    if not examples:
        sentence, clause = "", PAPER_FORMAT_NONE
    elif len(examples) == 1:
        sentence, clause = PAPER_EXAMPLES_ONE, PAPER_FORMAT_ONE
    else:
        sentence, clause = PAPER_EXAMPLES_MANY, PAPER_FORMAT_MANY
    parts = [PAPER_INSTRUCTION.format(relations="; ".join(RELATIONS.values()), examples_sentence=sentence,
                                      format_clause=clause)]
    if cg:
        parts.append(PAPER_CG)
    for ex in examples:  # each header and each block a paragraph of its own, as the appendix prints them
        parts += [PAPER_EXAMPLE_HEADER, ex.text, PAPER_ANSWER_HEADER, "\n".join(ex.triples)]
    parts += [PAPER_TEST_HEADER, test_text, PAPER_ANSWER_HEADER]
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
    "paper": Template("paper", "first-mention", "enclosed", PAPER_SYSTEM,
                      lambda h, r, t: f"<[{h}]; {r}; [{t}]>", _paper_layout),
    "envbench-v1": Template("envbench-v1", "first-mention", "tags", None,
                            lambda h, r, t: f"<{h}; {r}; {t}>", _v1_layout),
}
DEFAULT_TEMPLATE = "paper"

__all__ = ["DEFAULT_TEMPLATE", "Example", "PAPER_CG", "PAPER_SYSTEM", "TEMPLATES", "Template", "V1_CG_PARAGRAPH"]
