"""Which place a bare name means, when it needs asking back, and a place's names in each
language. `places.py` finds the names in questions and pages; both read `place_table`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pmflow_gateway.contract.place_table import Place, entries, latin_key, table
from pmflow_gateway.contract.text import CJK

# A bare name needs asking back when its second place weighs at least this share of the
# first. Weight (population; a region's biggest city's) stands in for how often a place is
# asked about: at a third, a guess of the bigger one is wrong one time in four, worse
# than one question back (Springfield MO/MA/IL, Rochester NY/MN, 泰州/台州 ask; Paris, London,
# Perth, Córdoba do not).
AMBIGUOUS_SHARE = 1 / 3
_KIND_ORDER = {"city": 0, "county": 1, "region": 2, "country": 3}
CHINESE_COUNTRIES = ("CN", "TW", "HK", "MO")


def readings(name: str) -> tuple[Place, ...]:
    """The distinct places a bare name can be, the most asked about (`Place.weight`) first.
    A place inside another of the same name stands for both (New York the city, not the state;
    荆州市 with 荆州区)."""
    name = name.strip()
    if CJK.search(name):
        return places_of((r for r, _ in entries(table().cjk.get(name))), chinese_first=True)
    return places_of(r for r, _ in entries(table().latin.get(latin_key(name))))


def ambiguous(name: str) -> bool:
    """Whether a bare name needs asking back: its second place weighs at least
    `AMBIGUOUS_SHARE` of the first (or neither has a known population)."""
    return comparable(readings(name))


def comparable(places: Sequence[Place]) -> bool:
    """Whether the first two of these readings are close enough to ask which is meant."""
    if len(places) < 2:
        return False
    first, second = places[0].weight, places[1].weight
    if first == 0:  # no population known: a prefecture is asked about before a county
        return places[0].kind == places[1].kind
    return second >= first * AMBIGUOUS_SHARE


def places_of(rows: Iterable[int], *, collapse: bool = True,
              chinese_first: bool = False) -> tuple[Place, ...]:
    """The places of these rows, most asked about first; with `collapse`, one per place
    that shares its name with one it lies in; with `chinese_first`, places in China before
    the rest (a Chinese name that China has means China's place: 江陵 is 江陵县 before
    Gangneung, whose hanja it also is)."""
    found = list(dict.fromkeys(table().place(r) for r in rows))
    if collapse:
        found = [p for p in found if not any(_stands_for(q, p) for q in found if q is not p)]
    return tuple(sorted(found, key=lambda p: (
        chinese_first and p.country not in CHINESE_COUNTRIES, -p.weight,
        _KIND_ORDER[p.kind], p.key)))


def _stands_for(one: Place, other: Place) -> bool:
    """Whether `one` is the reading to keep for `other` when both share a name: the city
    for a region or country it lies in (New York, Quebec, Hong Kong) or that it clearly
    outweighs in its own country (Taipei), the prefecture for its own county (荆州)."""
    if other.kind in ("region", "country") and one.kind in ("city", "county"):
        return contains(other, one) or (other.country == one.country
                                         and other.weight * 3 <= one.weight * 2)
    return contains(one, other) and one.kind == "city"


def contains(outer: Place, inner: Place) -> bool:
    if outer.row == inner.row:
        return False
    if outer.kind == "country":
        return inner.country == outer.key
    if outer.kind == "region":
        return inner.region == outer.key
    return bool(inner.parent) and inner.parent == outer.key


def holds_places(place: Place) -> bool:
    """A country, a region or a Chinese prefecture: what a qualifier names."""
    return place.kind in ("region", "country") or (place.kind == "city"
                                                     and place.key.startswith("cn"))


def lying_in(container: Place, places: Iterable[Place]) -> tuple[Place, ...]:
    return tuple(p for p in places if contains(container, p))


def namesakes(places: Iterable[Place]) -> tuple[Place, ...]:
    """The places sharing an English name with any of these: a Chinese transliteration is
    usually given to the best-known namesake only (珀斯 is Perth, Australia)."""
    rows = {r for p in places for n in p.en for r, _ in entries(table().latin.get(latin_key(n)))}
    return places_of(rows, collapse=False)


# --- names -------------------------------------------------------------------------------


def place_names(place: Place) -> tuple[str, ...]:
    """Every name of the place, English then Chinese."""
    return (*place.en, *place.zh)


def names_in_other_language(place: Place, *, zh: bool) -> tuple[str, ...]:
    """The place's names in the other language than the question's (`zh`: the question is in
    Chinese), the usual one first: for searching pages written in that language."""
    return place.en if zh else place.zh


def local_language(place: Place) -> str:
    """The language pages about the place are mostly written in, of the two the gateway
    answers in: "zh" for China, Taiwan, Hong Kong and Macau, "en" elsewhere."""
    return "zh" if place.country in CHINESE_COUNTRIES else "en"


def search_name(place: Place, *, zh: bool) -> str:
    """The name to search for in one language, qualified when the bare name would mean
    another place: by its country when that is enough ("Hamilton, New Zealand", 新西兰哈密尔顿),
    else by its region ("Springfield, Illinois", "Taizhou, Jiangsu", 湖北荆州)."""
    names = place.zh if zh else place.en
    if not names:
        return ""
    name = names[-1] if zh and len(names) > 1 and len(names[-1]) < len(names[0]) else names[0]
    found = readings(name)
    if found[:1] == (place,) and not comparable(found):
        return name
    alone = sum(p.country == place.country for p in found) == 1
    parent = table().by_key(place.parent) if place.parent else None
    if parent is not None and sum(p.region == place.region for p in found) > 1:
        # The region has two of them (新华区 of 石家庄 and of 沧州): say whose.
        if zh and parent.zh and place.zh:
            return parent.zh[-1] + place.zh[0]
        return f"{name}, {parent.name}"
    outer = table().by_key(place.country if alone else place.region)
    if outer is None:
        return name
    if zh and outer.zh:  # 湖北荆州, 伊利诺伊州斯普林菲尔德
        return (outer.zh[-1] if place.country == "CN" else outer.zh[0]) + name
    return f"{name}, {outer.name}"
