"""The world as an official-format Wikidata dump: one entity per item, and lean filler items."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson

from envbench.core.gender import P21, P21_FEMALE, P21_MALE
from envbench.worlds import wikidata_json as wj
from envbench.worlds.sample.names import alias_budget, make_names
from envbench.worlds.sample.rng import Rng
from envbench.worlds.sample.world import FINE_CLASSES, Item, World
from envbench.worlds.type_table import load_type_table


def _time_tuple(v: tuple[int, int, int, int]) -> dict[str, Any]:
    y, m, d, p = v
    return wj.time_value(y, m if p >= 10 else 0, d if p >= 11 else 0, p)


def item_entity(world: World, it: Item) -> wj.Entity:
    cls_q = FINE_CLASSES[it.cls][0]
    claims: dict[str, list[wj.Statement]] = {"P31": [wj.item_statement(it.qid, "P31", cls_q)]}
    for n, (c, rank, snaktype) in enumerate(it.extra_types):
        if snaktype == "value":
            claims["P31"].append(wj.item_statement(it.qid, "P31", c, rank=rank))
        else:
            claims["P31"].append(wj.statement(it.qid, "P31", None, "wikibase-item", snaktype=snaktype, key=f"special{n}"))
    for n, (p, kind, value, rank, snaktype) in enumerate(it.claims):
        lst = claims.setdefault(p, [])
        if snaktype != "value":
            lst.append(wj.statement(it.qid, p, None, "wikibase-item", snaktype=snaktype, key=f"special{n}"))
        elif kind == "item":
            lst.append(wj.item_statement(it.qid, p, value, rank=rank))
        elif kind == "time":
            lst.append(wj.statement(it.qid, p, _time_tuple(value), "time", key=n))
        else:
            lst.append(wj.statement(it.qid, p, wj.quantity_value(value), "quantity", key=n))
    if it.cls == "human":  # the pronouns of the documents agree with it (builder.pronoun)
        claims[P21] = [wj.item_statement(it.qid, P21, P21_FEMALE if it.female else P21_MALE)]
    if it.demonym:  # how documents name the country's people ("the Vordian singer"), as Wikidata's P1549
        claims["P1549"] = [wj.demonym_statement(it.qid, it.demonym)]
    labels = {"en": it.label, **it.other_labels}
    desc = {"en": f"sample {load_type_table().classes[cls_q].label}"}
    page = world.enwiki.get(it.qid)
    sitelinks = {"enwiki": page} if page else {}
    if page and "de" in it.other_labels:
        sitelinks["dewiki"] = it.other_labels["de"]
    return wj.item(it.qid, labels=labels, descriptions=desc, aliases={"en": it.aliases}, claims=claims, sitelinks=sitelinks)


LEAN_CHUNK = 1000  # filler items per seeded stream; output does not depend on anything else


def lean_entities(seed: int, start: int, count: int, first: int = 0) -> Iterator[wj.Entity]:
    """Filler items ``first`` .. ``count - 1`` (names and P31 only), one at a time (constant memory).

    Item n is Q(start + n) and depends only on (seed, n), so chunks can be made in any process.
    """
    keys = list(FINE_CLASSES)
    r = Rng(seed, "lean", first // LEAN_CHUNK)
    for n in range(first, count):
        if n % LEAN_CHUNK == 0 or n == first:  # one hash per chunk, not per item, keeps this fast
            r = Rng(seed, "lean", n // LEAN_CHUNK)
        cls = keys[n % len(keys)]
        label, cands, extra = make_names(cls, r, {})
        k = alias_budget(r)
        aliases = [c for c in dict.fromkeys(cands) if c != label][:k]
        qid = f"Q{start + n}"
        guid = f"{r.next():016X}{r.next():016X}"
        claims: dict[str, Any] = {"P31": [_lean_statement(qid, "P31", FINE_CLASSES[cls][0], guid)]}
        if cls == "human":  # a filler person has a gender too, so persons draw among their own
            claims[P21] = [_lean_statement(qid, P21, P21_FEMALE if extra.get("female") else P21_MALE, guid[::-1])]
        yield {
            "type": "item",
            "id": qid,
            "labels": {"en": {"language": "en", "value": label}},
            "descriptions": {},
            "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": claims,
            "sitelinks": {},
        }


def _lean_statement(qid: str, prop: str, value: str, guid: str) -> wj.Statement:
    return {
        "mainsnak": {"snaktype": "value", "property": prop, "datavalue": wj.entity_value(value),
                     "datatype": "wikibase-item"},
        "type": "statement",
        "id": f"{qid}${guid[:8]}-{guid[8:12]}-{guid[12:16]}-{guid[16:20]}-{guid[20:32]}",
        "rank": "normal",
    }


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _lean_block(args: tuple[int, int, int, int]) -> bytes:
    """Dump lines for filler items [n0, n1), joined as the dump writes them."""
    seed, start, n0, n1 = args
    return b",\n".join(orjson.dumps(e) for e in lean_entities(seed, start, n1, first=n0))


def write_lean(writer: wj.DumpWriter, seed: int, start: int, count: int, workers: int | None = None,
               block: int = 20 * LEAN_CHUNK) -> None:
    """Stream ``count`` filler items into ``writer``, in blocks made by worker processes, in order.

    The items do not depend on ``workers`` or ``block`` (a multiple of ``LEAN_CHUNK``); the gzip
    bytes depend on ``block`` only, which is why the dump writer always uses the default.
    """
    if block % LEAN_CHUNK:
        raise ValueError(f"block must be a multiple of {LEAN_CHUNK}")
    tasks = [(seed, start, n0, min(n0 + block, count)) for n0 in range(0, count, block)]
    workers = workers or min(8, os.cpu_count() or 1)
    if workers <= 1 or len(tasks) <= 2:
        for t in tasks:
            writer.write_raw(_lean_block(t), t[3] - t[2])
        return
    import multiprocessing

    # workers ignore Ctrl-C: the parent stops, and leaving the pool terminates them, with no traceback of theirs
    with multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_sigint) as pool:
        # imap keeps order and holds only a few blocks in memory at a time.
        for t, data in zip(tasks, pool.imap(_lean_block, tasks, chunksize=1)):
            writer.write_raw(data, t[3] - t[2])
