"""The document templates, one function per kind of document, and ``build_docs`` that deals topics to them."""

from __future__ import annotations

from typing import Any

from envbench.worlds.sample.builder import DocBuilder, at, pronoun, render_number
from envbench.worlds.sample.names import ADJ, MONTHS, NOUN, NUMBER_WORDS, ORDINALS
from envbench.worlds.sample.rng import Rng
from envbench.worlds.sample.world import World


def doc_musician(b: DocBuilder, h: str) -> None:
    w = b.world
    band = w.obj(h, "P463")
    k = w.obj(h, "P27")
    city = w.obj(h, "P19")
    he = pronoun(w, h)
    split = b.variant % 3 == 0  # every third musician document annotates the demonym as its own entity
    if k:
        b.say("{} ( born {} ) is a {} singer , songwriter and guitarist .", b.e(h, first=True), b.time(h, "P569"),
              b.dem(k, split=split))
    else:
        b.say("{} ( born {} ) is a singer , songwriter and guitarist .", b.e(h, first=True), b.time(h, "P569"))
    if city:
        prov = w.obj(city, "P131")
        uni = w.obj(h, "P69")
        if prov and uni:
            b.say("Born in {} , {} , {} studied music at {} .", b.e(city, first=True), b.e(prov, first=True), b.e(h), b.e(uni, first=True))
        elif prov:
            b.say("Born in {} , {} , {} began performing in local clubs as a teenager .", b.e(city, first=True),
                  b.e(prov, first=True), b.e(h))
    if band:
        members = [m for m in w.objs(band, "P527") if m != h]
        b.say("In {} {} co-founded {} with {} .", b.time(band, "P571", "year"), b.e(h), b.e(band, first=True),
              b.e(members[0], first=True) if members else b.e(h))
        perf = band
    else:
        perf = h
        b.say("{} launched a solo career soon afterwards .", he)
    lbl = w.obj(perf, "P264")
    albums = [a for a in w.cls("album") if w.obj(a, "P175") == perf][:2]
    if lbl and albums:
        t = b.time(albums[0], "P577")
        b.say("{} signed with {} and released the album {} " + at(t) + " {} .", b.e(perf), b.e(lbl, first=True),
              b.e(albums[0], first=True), t)
        songs = w.objs(albums[0], "P527")
        if songs:
            b.say("{} sold more than {} copies and produced the single \" {} \" .", b.e(albums[0]),
                  b.num(render_number(b.rng, 50_000, 3_000_000)), b.e(songs[0], first=True))
    if len(albums) > 1:
        songs2 = w.objs(albums[1], "P527")
        if songs2:
            b.say("The follow-up , {} , appeared in {} and included \" {} \" .", b.e(albums[1], first=True),
                  b.time(albums[1], "P577", "year"), b.e(songs2[-1], first=True))
    infl = w.obj(h, "P737")
    if infl:
        b.say("{} has named {} as {} main influence .", b.e(h), b.e(infl, first=True), "her" if w.items[h].female else "his")
    aw = w.obj(h, "P166")
    if aw:
        b.say("{} received the {} in {} .", b.e(h), b.e(aw, first=True), b.plain_time(str(b.rng.between(1990, 2022))))
    sp = w.obj(h, "P26")
    if sp:
        b.say("{} has been married to {} since {} .", b.e(h), b.e(sp, first=True), b.plain_time(str(b.rng.between(1980, 2020))))
    if k:
        b.say("{} lives in {} , the capital of {} .", he, b.e(w.obj(k, "P36") or k), b.e(k))


def doc_band(b: DocBuilder, band: str) -> None:
    w = b.world
    k = w.obj(band, "P495")
    city = w.obj(band, "P740")
    members = w.objs(band, "P527")
    assert k and city
    t = b.time(band, "P571", "decade")
    b.say("{} are a {} rock band formed in {} in {} .", b.e(band, first=True), b.dem(k), b.e(city, first=True), t)
    names = [b.e(m, first=True) for m in members]
    if len(names) >= 3:
        b.say("The group consists of {} , {} and {} .", *names[:3])
    elif len(names) == 2:
        b.say("The group consists of {} and {} .", *names)
    lbl = w.obj(band, "P264")
    albums = [a for a in w.cls("album") if w.obj(a, "P175") == band][:2]
    if lbl:
        lcity = w.obj(lbl, "P159")
        if lcity:
            b.say("{} signed to {} , a label based in {} , {} .", b.e(band), b.e(lbl, first=True), b.e(lcity, first=True),
                  b.e(w.obj(lcity, "P17") or k, first=True))
    if albums:
        songs = w.objs(albums[0], "P527")
        t = b.time(albums[0], "P577")
        b.say("Their debut album {} was released " + at(t) + " {} and reached number {} in {} .", b.e(albums[0], first=True),
              t, b.num(str(b.rng.between(1, 40))), b.e(k))
        if songs:
            b.say("It spawned the single \" {} \" , written by {} .", b.e(songs[0], first=True),
                  b.e(w.obj(songs[0], "P86") or members[0]))
    if len(albums) > 1:
        b.say("{} 's second album , {} , followed in {} .", b.e(band), b.e(albums[1], first=True), b.time(albums[1], "P577", "month"))
    if b.rng.chance(0.7):
        tour = f"{b.rng.choice(ADJ)} {b.rng.choice(NOUN)} Tour"
        b.say("In {} the band embarked on the {} , playing {} concerts .", b.plain_time(str(b.rng.between(1990, 2022))),
              b.other(tour, "MISC"), b.num(render_number(b.rng, 12, 180)))
    if members:
        m = members[-1]
        bc = w.obj(m, "P19")
        if bc:
            t = b.time(m, "P569")
            b.say("{} was born in {} " + at(t) + " {} .", b.e(m), b.e(bc), t)
        uni = w.obj(m, "P69")
        if uni:
            b.say("{} studied at {} before joining {} .", pronoun(w, m), b.e(uni, first=True), b.e(band))


def doc_album(b: DocBuilder, al: str) -> None:
    w = b.world
    perf = w.obj(al, "P175")
    assert perf
    lbl = w.obj(al, "P264")
    pit = w.items[perf]
    k = w.obj(perf, "P495") or w.obj(perf, "P27")
    what = "band" if pit.cls == "band" else "singer"
    t = b.time(al, "P577")
    if k and lbl:
        b.say("{} is an album by the {} " + what + " {} , released " + at(t) + " {} by {} .", b.e(al, first=True), b.dem(k),
              b.e(perf, first=True), t, b.e(lbl, first=True))
    else:
        b.say("{} is an album by {} , released " + at(t) + " {} .", b.e(al, first=True), b.e(perf, first=True), t)
    prev, nxt = w.obj(al, "P155"), w.obj(al, "P156")
    if prev and nxt:
        b.say("It was preceded by {} and followed by {} .", b.e(prev, first=True), b.e(nxt, first=True))
    elif prev:
        b.say("It follows {} , released in {} .", b.e(prev, first=True), b.time(prev, "P577", "year"))
    elif nxt:
        b.say("It was followed by {} .", b.e(nxt, first=True))
    songs = w.objs(al, "P527")
    for s in songs[:3]:
        writer = w.obj(s, "P86")
        if w.items[s].label == w.items[al].label:
            b.say("The title track , \" {} \" , was issued as a single .", b.e(s, first=True))
        elif writer:
            b.say("The song \" {} \" was written by {} .", b.e(s, first=True), b.e(writer, first=True))
        else:
            b.say("\" {} \" became a radio hit .", b.e(s, first=True))
    if k:
        b.say("{} sold {} copies in its first week in {} .", b.e(al), b.num(render_number(b.rng, 5_000, 2_500_000)), b.e(k, first=True))
    place = w.obj(perf, "P740") or w.obj(perf, "P19")
    if place:
        b.say("The record was made in {} over {} weeks in {} .", b.e(place, first=True), b.num(b.rng.choice(NUMBER_WORDS)),
              b.plain_time(f"{b.rng.choice(MONTHS)} {w.times[(al, 'P577')][0] - 1}"))
    members = w.objs(perf, "P527")
    if members:
        b.say("{} wrote most of the lyrics while {} arranged the strings .", b.e(members[0], first=True), b.e(members[-1], first=True))
    countries = w.cls("country")
    b.say("{} promoted {} with a tour of {} .", b.e(perf), b.e(al), b.e(countries[b.rng.below(len(countries))], first=True))


def doc_film(b: DocBuilder, fm: str) -> None:
    w = b.world
    d = w.obj(fm, "P57")
    sw = w.obj(fm, "P58")
    k = w.obj(fm, "P495")
    assert d and k
    if sw and sw != d:
        b.say("{} is a {} {} drama film directed by {} and written by {} .", b.e(fm, first=True), b.time(fm, "P577", "year"),
              b.dem(k), b.e(d, first=True), b.e(sw, first=True))
    else:
        b.say("{} is a {} {} drama film written and directed by {} .", b.e(fm, first=True), b.time(fm, "P577", "year"),
              b.dem(k), b.e(d, first=True))
    cast = w.objs(fm, "P161")
    if len(cast) >= 3:
        b.say("It stars {} , {} and {} .", *(b.e(c, first=True) for c in cast[:3]))
    co = w.obj(fm, "P272")
    if co:
        cc = w.obj(co, "P159")
        b.say("The film was produced by {} , a studio based in {} .", b.e(co, first=True), b.e(cc or k, first=True))
    cities = [c for c in w.cls("city") if w.obj(c, "P17") == k][:2]
    if len(cities) == 2:
        b.say("Principal photography took place in {} and {} in {} .", b.e(cities[0], first=True), b.e(cities[1], first=True),
              b.plain_time(f"{b.rng.choice(MONTHS)} {w.times[(fm, 'P577')][0] - 1}"))
    fest = f"{w.items[cities[0]].label if cities else 'Venice'} Film Festival"
    t = b.time(fm, "P577")
    b.say("{} premiered at the {} and opened in {} " + at(t) + " {} .", b.e(fm), b.other(fest, "MISC"), b.e(k, first=True), t)
    lang = w.obj(fm, "P364")
    if lang:
        b.say("Shot in {} , it grossed $ {} worldwide .", b.e(lang, first=True), b.num(render_number(b.rng, 1_000_000, 90_000_000)))
    aw = w.obj(fm, "P166")
    if aw:
        b.say("{} won the {} .", b.e(fm), b.e(aw, first=True))
    if cast:
        bc = w.obj(cast[0], "P19")
        if bc:
            b.say("{} , who was born in {} , prepared for the role for {} months .", b.e(cast[0]), b.e(bc, first=True),
                  b.num(b.rng.choice(NUMBER_WORDS)))
    b.say("{} later called {} the most personal of {} films .", b.e(d), b.e(fm), "her" if w.items[d].female else "his")


def doc_novel(b: DocBuilder, nv: str) -> None:
    w = b.world
    au = w.obj(nv, "P50")
    pub = w.obj(nv, "P123")
    k = w.obj(nv, "P495")
    assert au and k
    b.say("{} is a novel by the {} writer {} , first published in {} by {} .", b.e(nv, first=True), b.dem(k),
          b.e(au, first=True), b.time(nv, "P577", "year"), b.e(pub, first=True) if pub else "a small press")
    city = w.obj(au, "P19")
    if city:
        t = b.time(au, "P569")
        decade = (w.times[(au, "P569")][0] + 25) // 10 * 10
        b.say("{} was born in {} " + at(t) + " {} and began writing fiction in {} .", b.e(au), b.e(city, first=True), t,
              b.plain_time(f"the {decade}s"))
    prev, nxt = w.obj(nv, "P155"), w.obj(nv, "P156")
    if prev:
        b.say("The book is a sequel to {} ( {} ) .", b.e(prev, first=True), b.time(prev, "P577", "year"))
    if nxt:
        b.say("A sequel , {} , appeared in {} .", b.e(nxt, first=True), b.time(nxt, "P577", "year"))
    lang = w.obj(nv, "P364")
    if lang:
        b.say("Written in {} , it has been translated into {} languages and sold {} copies .", b.e(lang, first=True),
              b.num(b.rng.choice(NUMBER_WORDS)), b.num(render_number(b.rng, 20_000, 4_000_000)))
    if city:
        prov = w.obj(city, "P131")
        if prov:
            b.say("The story is set in {} , {} , during the {} .", b.e(city), b.e(prov, first=True),
                  b.other(f"{b.rng.choice(ADJ)} War", "MISC"))
    aw = w.obj(au, "P166")
    if aw:
        b.say("In {} , {} received the {} .", b.plain_time(str(b.rng.between(1980, 2022))), b.e(au), b.e(aw, first=True))
    uni = w.obj(au, "P69")
    if uni:
        b.say("{} taught creative writing at {} , {} .", b.e(au), b.e(uni, first=True), b.e(w.obj(uni, "P131") or k, first=True))
    sp = w.obj(au, "P26")
    if sp:
        b.say("{} is married to {} .", pronoun(w, au), b.e(sp, first=True))


def doc_city(b: DocBuilder, city: str) -> None:
    w = b.world
    prov = w.obj(city, "P131")
    k = w.obj(city, "P17")
    assert prov and k
    river = w.obj(city, "P206")
    if river:
        b.say("{} is a city in {} , {} , on the banks of the {} .", b.e(city, first=True), b.e(prov, first=True),
              b.e(k, first=True), b.e(river, first=True))
    else:
        b.say("{} is a city in {} , {} .", b.e(city, first=True), b.e(prov, first=True), b.e(k, first=True))
    b.say("With a population of {} , it is the {} largest city in {} .", b.num(render_number(b.rng, 20_000, 2_000_000)),
          b.rng.choice(ORDINALS), b.e(prov))
    unis = sorted((u for u in w.cls("university") if w.obj(u, "P131") == city),
                  key=lambda u: w.items[city].label not in w.items[u].label)
    clubs = [c for c in w.cls("club") if w.obj(c, "P131") == city]
    if unis:
        uref = b.e(unis[0], first=True)
        b.say("The city is home to {} , founded in {} .", uref, b.time(unis[0], "P571", "year"))
        pos = b.find(uref)
        cref = b.e(city, w.items[city].label)
        if pos and cref.name in uref.name and uref.name != cref.name:
            b.nested(uref, cref, *pos)  # "University of X" contains the city's own mention
    if clubs:
        lg = w.obj(clubs[0], "P118")
        if lg:
            b.say("The football club {} plays in the {} .", b.e(clubs[0], first=True), b.e(lg, first=True))
        else:
            b.say("The football club {} was founded in {} .", b.e(clubs[0], first=True), b.time(clubs[0], "P571", "year"))
    cos = [c for c in w.cls("company") + w.cls("label") if w.obj(c, "P159") == city][:1]
    if cos:
        b.say("{} has its headquarters in {} .", b.e(cos[0], first=True), b.e(city))
    born = [h for h in w.cls("human") if w.obj(h, "P19") == city][:3]
    if len(born) >= 2:
        b.say("Notable people born in {} include " + " , ".join(["{}"] * (len(born) - 1)) + " and {} .", b.e(city),
              *(b.e(h, first=True) for h in born))
    mount = [m for m in w.cls("mountain") if w.obj(m, "P131") == prov][:1]
    if mount:
        b.say("{} , {} metres high , rises south of the city .", b.e(mount[0], first=True), b.num(render_number(b.rng, 900, 4800)))
    if (k, "P1198") in w.quantities:
        b.say("The unemployment rate of {} stood at {} in {} .", b.e(k), b.num_fact(k, "P1198"),
              b.plain_time(f"{b.rng.choice(MONTHS)} {b.rng.between(2005, 2022)}"))
    cap = w.obj(k, "P36")
    if cap and cap != city:
        b.say("{} 's capital , {} , lies {} kilometres to the north .", b.e(k), b.e(cap, first=True),
              b.num(render_number(b.rng, 30, 900)))
    else:
        b.say("{} is also the capital of {} .", b.e(city), b.e(k))



DOC_KINDS = (
    ("musician", doc_musician),
    ("band", doc_band),
    ("album", doc_album),
    ("film", doc_film),
    ("novel", doc_novel),
    ("city", doc_city),
)


def _topics(world: World, kind: str) -> list[str]:
    if kind == "musician":
        return [h for h in world.cls("human") if world.roles[h] == "musician" and world.obj(h, "P463")]
    # Topics that make tricky documents come first, so every split gets some.
    if kind == "city":
        born = {world.obj(h, "P19") for h in world.cls("human")}
        nested = {world.obj(u, "P131") for u in world.cls("university")
                  if world.items[world.obj(u, "P131") or ""].label in world.items[u].label}
        cities = [c for c in world.cls("city") if c in born]
        return sorted(cities, key=lambda c: c not in nested)
    if kind == "album":
        def has_title_track(a: str) -> bool:
            return any(world.items[s].label == world.items[a].label for s in world.objs(a, "P527"))
        return sorted(world.cls("album"), key=lambda a: not has_title_track(a))
    return world.cls(kind)


def build_docs(world: World, seed: int, n_docs: int) -> tuple[list[dict[str, Any]], dict[str, list[str | None]]]:
    topic_lists = {kind: _topics(world, kind) for kind, _ in DOC_KINDS}
    docs: list[dict[str, Any]] = []
    links: dict[str, list[str | None]] = {}
    cursor = dict.fromkeys(topic_lists, 0)
    i = 0
    stalls = 0
    while len(docs) < n_docs and stalls < len(DOC_KINDS):
        kind, fn = DOC_KINDS[i % len(DOC_KINDS)]
        i += 1
        lst = topic_lists[kind]
        if cursor[kind] >= len(lst):
            stalls += 1
            continue
        stalls = 0
        topic = lst[cursor[kind]]
        cursor[kind] += 1
        title = world.items[topic].label
        if title in links:
            continue
        b = DocBuilder(world, title, Rng(seed, "doc", topic), variant=cursor[kind] - 1)
        fn(b, topic)
        doc, lk = b.build()
        if len(doc["sents"]) < 4:
            continue
        docs.append(doc)
        links[title] = lk
    return docs, links
