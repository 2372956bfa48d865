"""Places from the generated table: finding them in questions (both scripts, qualifiers,
words that are also places), reading a bare name (ambiguity), names across languages, and
whether a page speaks of the asked place. The places here are none of tests/data's."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract import place_table
from pmflow_gateway.contract.place_table import latin_key, table
from pmflow_gateway.contract.places import (
    Place,
    PlaceMention,
    ambiguous,
    find_places,
    local_language,
    names_in_other_language,
    place_names,
    readings,
    same_place,
    search_name,
)
from pmflow_gateway.contract.relevance import place_readings
from tests.support.builders import weather_plan


def one(question: str, *, place_question: bool = True) -> PlaceMention:
    found = find_places(question, place_question=place_question)
    assert len(found) == 1, (question, found)
    return found[0]


def place(question: str) -> Place:
    found = one(question).place
    assert found is not None, question
    return found


# --- places the old gazetteer did not know ------------------------------------------------


@pytest.mark.parametrize(("question", "name", "country", "region"), [
    ("kalgoorlie weather tomorrow", "Kalgoorlie", "AU", "AU-WA"),
    ("will it snow in inverness tomorrow", "Inverness", "GB", "GB-SCT"),
    ("Asheville weather next few days", "Asheville", "US", "US-NC"),
    ("how cold is it in fargo", "Fargo", "US", "US-ND"),
    ("ushuaia forecast this weekend", "Ushuaia", "AR", "AR-V"),
    ("宜昌明天会下雨吗", "Yichang", "CN", "CN-HB"),
    ("昆山今天多少度", "Kunshan", "CN", "CN-JS"),
    ("温得和克天气怎么样", "Windhoek", "NA", "NA-KH"),
])
def test_a_place_no_list_typed_is_found(question: str, name: str, country: str,
                                        region: str) -> None:
    found = place(question)
    assert (found.name, found.country, found.region) == (name, country, region)


@pytest.mark.parametrize(("written", "name"), [
    ("alesund", "Ålesund"), ("Ålesund", "Ålesund"), ("MALMO", "Malmö"), ("malmö", "Malmö"),
    ("krakow", "Kraków"), ("Zurich", "Zürich"), ("sao paulo", "São Paulo"),
])
def test_latin_names_match_without_case_or_accents(written: str, name: str) -> None:
    assert place(f"weather in {written} today").name == name


def test_a_span_is_reported_as_written() -> None:
    question = "Is it snowing in KRAKÓW right now?"
    mention = one(question)
    assert question[mention.start:mention.end] == mention.text == "KRAKÓW"


# --- words that are also places -----------------------------------------------------------


@pytest.mark.parametrize("question", [
    "Is Reading a good habit for kids?", "reading list for the summer",
    "nice weather today", "Nice weather today!", "Mobile phone prices this year",
    "Orange juice or apple juice?", "should I take a bath tonight", "how to split the bill",
    "Victoria Beckham news", "What did Victoria say yesterday?", "Queen Victoria biography",
    "Paris Hilton latest", "Washington Post headlines", "flash sale this weekend",
    "公安局的电话是多少", "这条通道什么时候开放", "世界和平日是哪天", "今天天气和平时一样吗",
])
def test_an_everyday_word_is_no_place(question: str) -> None:
    weather = any(w in question.lower() for w in ("weather", "天气"))
    assert find_places(question, place_question=weather) == []


@pytest.mark.parametrize(("question", "name", "country"), [
    ("What's the weather in Reading tomorrow?", "Reading", "GB"),
    ("weather for Nice this weekend", "Nice", "FR"),
    ("Is it raining in Mobile, AL?", "Mobile", "US"),
    ("Will it rain in Bath tomorrow?", "Bath", "GB"),
    ("Split, Croatia weather", "Split", "HR"),
    ("Victoria BC weather", "Victoria", "CA"),
    ("通道天气", "Tongdao", "CN"),
])
def test_a_word_is_a_place_where_the_question_says_so(question: str, name: str,
                                                      country: str) -> None:
    found = place(question)
    assert (found.name, found.country) == (name, country)


def test_a_capitalised_word_after_a_place_is_part_of_a_name_unless_about_a_place() -> None:
    assert find_places("Hobart Brown interview") == []
    assert place("Hobart Weather Tomorrow").country == "AU"


def test_a_name_that_is_also_a_persons_needs_a_place_question() -> None:
    assert find_places("what did Florence say", place_question=False) == []
    assert place("Florence weather next week").country == "IT"


# --- qualifiers ---------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "region", "qualifier"), [
    ("Hamilton, New Zealand weather", "NZ-WKO", "New Zealand"),
    ("Hamilton Ontario weather", "CA-ON", "Ontario"),
    ("Halifax NS weather", "CA-NS", "Nova Scotia"),
    ("Hobart, Tasmania tomorrow", "AU-TAS", "Tasmania"),
    ("Birmingham, AL weather", "US-AL", "Alabama"),
    ("Birmingham, Alabama weather", "US-AL", "Alabama"),
    ("weather in Windsor, UK", "GB-ENG", "United Kingdom"),
    ("Washington, D.C. weather", "US-DC", "District of Columbia"),
    ("湖北宜昌明天天气", "CN-HB", "Hubei"),
    ("湖北省宜昌市明天天气", "CN-HB", "Hubei"),
    ("阿拉巴马州伯明翰天气", "US-AL", "Alabama"),
    ("新西兰汉密尔顿今天几度", "NZ-WKO", "New Zealand"),
    ("安大略伦敦天气", "CA-ON", "Ontario"),
    ("美国阿拉巴马州伯明翰天气", "US-AL", "Alabama"),
])
def test_a_qualifier_picks_one_place(question: str, region: str, qualifier: str) -> None:
    mention = one(question)
    assert mention.place is not None and mention.place.region == region
    assert mention.qualifier is not None and mention.qualifier.name == qualifier
    assert mention.text in question and len(mention.text) > len(mention.name)


def test_a_chinese_transliteration_finds_the_namesake_the_qualifier_names() -> None:
    # 因弗内斯 is no name of Inverness here, 伯斯 is Perth in Scotland's; a Chinese question
    # writes the big Perth's 珀斯 and still means the one in Scotland.
    assert place("苏格兰珀斯今天多少度").region == "GB-SCT"


def test_a_district_qualified_by_its_city_is_that_citys() -> None:
    assert place("北京通州明天天气").region == "CN-BJ"
    assert place("江苏南通通州区天气").region == "CN-JS"


def test_a_lower_case_abbreviation_without_a_comma_is_a_word() -> None:
    # "springfield or chicago": OR is Oregon only where it is written as an abbreviation.
    mention = find_places("Hamilton or Halifax weather", place_question=True)[0]
    assert mention.qualifier is None and mention.text == "Hamilton"


# --- readings and asking back -------------------------------------------------------------


@pytest.mark.parametrize("name", ["Hamilton", "Newcastle", "Valencia", "Georgia", "Dover",
                                  "Tongzhou", "通州", "鼓楼", "Lancaster"])
def test_comparable_places_ask_back(name: str) -> None:
    assert ambiguous(name)
    assert one(f"{name} weather" if name.isascii() else f"{name}天气").ambiguous


@pytest.mark.parametrize("name", ["Paris", "London", "Sydney", "Birmingham", "Halifax",
                                  "Bristol", "Fuzhou", "Lima", "巴黎", "悉尼", "Kalgoorlie"])
def test_a_far_bigger_place_wins(name: str) -> None:
    assert not ambiguous(name)
    assert len(readings(name)) >= 1


def test_readings_are_ordered_by_weight_and_the_big_one_is_meant() -> None:
    found = readings("Sydney")
    assert [p.country for p in found[:2]] == ["AU", "CA"]
    assert found[0].weight > found[1].weight
    assert place("Sydney weather").country == "AU"


def test_a_city_stands_for_the_region_or_country_of_its_name() -> None:
    assert [p.kind for p in readings("Hong Kong")] == ["city"]
    assert readings("Singapore")[0].kind == "city" and not ambiguous("Singapore")
    assert readings("Ontario")[0].kind == "region"  # the province, not Ontario, California


def test_a_chinese_name_china_has_means_chinas_place() -> None:
    # 江陵 is also Gangneung's hanja name.
    assert readings("江陵")[0].country == "CN"


def test_a_prefecture_is_read_before_its_own_district() -> None:
    assert [p.kind for p in readings("宜昌")] == ["city"]
    assert place("宜昌天气").zh[0] == "宜昌市"


# --- names across languages ---------------------------------------------------------------


def test_names_in_the_other_language() -> None:
    yichang = readings("宜昌")[0]
    assert names_in_other_language(yichang, zh=True) == ("Yichang",)
    assert "宜昌" in names_in_other_language(readings("Yichang")[0], zh=False)
    windhoek = readings("Windhoek")[0]
    assert names_in_other_language(windhoek, zh=False)[0] == "温得和克"
    assert set(place_names(windhoek)) >= {"Windhoek", "温得和克"}
    assert (local_language(yichang), local_language(windhoek)) == ("zh", "en")


def test_a_search_name_carries_the_qualifier_a_bare_name_would_lose() -> None:
    perth_scotland = place("Perth, Scotland weather")
    assert search_name(perth_scotland, zh=False) == "Perth, United Kingdom"
    assert search_name(readings("Kalgoorlie")[0], zh=False) == "Kalgoorlie"
    assert search_name(place("Hamilton, New Zealand weather"), zh=True) == "新西兰哈密尔顿"
    assert search_name(readings("Yichang")[0], zh=True) == "宜昌"
    assert search_name(readings("抚州")[0], zh=False) == "Fuzhou, Jiangxi"
    assert search_name(place("Jackson, TN weather"), zh=True) == "田纳西州杰克逊"
    # Two 桥西区 in one province (邢台's and 张家口's): the province is not enough, the city is.
    assert search_name(place("邢台桥西区天气"), zh=True) == "邢台桥西区"


# --- pages --------------------------------------------------------------------------------


@pytest.mark.parametrize(("page", "expected"), [
    ("湖北省宜昌市今天多云，18到25度", True),
    ("宜昌市今天多云", True),
    ("宜昌今天多云", True),
    ("Yichang, Hubei: cloudy, 18-25C", True),
    ("Yichang, China weather", True),
    ("Yichang, Hunan: cloudy", False),
    ("湖南宜昌今天晴", False),
    ("上海今天晴", False),
])
def test_a_page_about_the_asked_place(page: str, expected: bool) -> None:
    assert same_place(page, place("湖北宜昌明天天气")) is expected


@pytest.mark.parametrize(("page", "expected"), [
    ("北京市通州区明天小雨", True),
    ("北京通州明天小雨", True),
    ("南通市通州区明天小雨", False),
    ("江苏通州明天小雨", False),
])
def test_a_district_of_another_city_is_another_place(page: str, expected: bool) -> None:
    assert same_place(page, place("北京通州明天天气")) is expected


@pytest.mark.parametrize(("page", "expected"), [
    ("Perth, Scotland: rain later", True),
    ("Perth, UK - showers", True),
    ("Perth weather: sunny, 30C", False),  # bare Perth is the one in Australia
    ("Perth, Western Australia: sunny", False),
])
def test_a_smaller_namesake_must_be_confirmed(page: str, expected: bool) -> None:
    assert same_place(page, place("Perth, Scotland weather")) is expected


def test_an_everyday_word_on_a_page_is_not_the_place() -> None:
    reading = place("weather in Reading, UK")
    assert not same_place("Reading is good for you.", reading)
    assert same_place("Reading, UK: light rain", reading)


def test_a_region_the_table_cannot_place_does_not_refute() -> None:
    # GeoNames' region of Kraków has no ISO match here, so its voivodeship cannot say no.
    krakow = readings("Krakow")[0]
    assert same_place("Kraków, Małopolska: cloudy", krakow)
    assert same_place("KRAKOW, POLAND - rain", krakow)
    assert not same_place("Krakow, Texas: cloudy", krakow)


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_mentions_are_ordered_spans_of_the_text(text: str) -> None:
    found = find_places(text, place_question=True)
    for mention in found:
        assert text[mention.start:mention.end] == mention.text
        assert mention.readings
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(table()) - 1))
def test_every_name_in_the_table_reads_back(row: int) -> None:
    found = table().place(row)
    for name in place_names(found):
        named = readings(name)
        assert named, name
        assert found in named or any(found.region == p.key or found.parent == p.key
                                     or p.country == found.country for p in named)


@given(st.sampled_from(["Ålesund", "São Paulo", "Xi'an", "Winston-Salem", "Kraków"]),
       st.sampled_from([str.upper, str.lower, str.title]))
def test_a_key_ignores_case(name: str, case: Callable[[str], str]) -> None:
    assert latin_key(case(name)) == latin_key(name)


# --- cost -----------------------------------------------------------------------------------


class CountingDict(dict[str, object]):
    probes = 0

    def get(self, key: str, default: object = None) -> object:
        CountingDict.probes += 1
        return super().get(key, default)


def test_a_question_costs_a_few_probes_per_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """No timing: the number of index probes bounds the work, and it grows with the words of
    the question, not with the size of the table."""
    loaded = table()
    monkeypatch.setattr(loaded, "latin", CountingDict(loaded.latin))
    monkeypatch.setattr(loaded, "cjk", CountingDict(loaded.cjk))
    question = ("What will the weather be like in Kalgoorlie and in Hobart, Tasmania over the "
                "next few days, and should I pack an umbrella? 宜昌和昆山明天会下雨吗")
    CountingDict.probes = 0
    find_places(question, place_question=True)
    words = len(question.split()) + sum(1 for c in question if "\u4e00" <= c <= "\u9fff")
    assert CountingDict.probes <= 4 * words


def test_the_table_is_loaded_once() -> None:
    assert place_table.table() is place_table.table()



def test_a_page_reads_the_place_as_another_only_with_a_capitalised_qualifier() -> None:
    plan = weather_plan(location_hint="Springfield", subject_entities=["Springfield"])
    assert place_readings(plan, ["Springfield, Ill. -- rain.", "Springfield, Mo. -- snow."]) \
        == ["Ill.", "Mo."]
    plan = weather_plan(location_hint="South Dakota", subject_entities=["South Dakota"])
    assert place_readings(plan, ["Youth use in South Dakota, and nationally, fell.",
                                 "In South Dakota, no county reported it."]) == []
