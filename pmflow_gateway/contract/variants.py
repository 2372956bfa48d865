"""Variants: a longer name that contains the asked one names something else.

"iPhone 17 Pro Max" is not the iPhone 17 Pro, "Arsenal Women" is not Arsenal, "Bitcoin Cash"
is not bitcoin, the "Snapdragon 8 Elite Gen 5" is not the Snapdragon 8 Gen 5 and the shadow
chancellor is not the chancellor. A mention of an asked name counts only when it carries
exactly the qualifiers the question gave it: none added after it, between its words or (for
a title) before it, and none of the asked ones missing.
"""

from __future__ import annotations

import functools
import re

from pmflow_gateway.contract.caseblind import CaseBlind
from pmflow_gateway.contract.memo import cached_if_short
from pmflow_gateway.contract.text import CJK_CHARS

# Words that make a model, an edition or a team of its own.
_QUALIFIERS = (
    r"pro|max|plus|ultra|mini|lite|elite|se|air|neo|fe|edge|fold|flip|turbo|xl|classic|cash"
    r"|gold|sv|women|womens|women's|ladies|reserves?|ii|iii|iv|u\d{2}")
_ZH_QUALIFIERS = (r"女足|女篮|女排|女队|女子|青年队|预备队|经典版|现金|标准版|青春版|至尊版"
                  r"|超大杯|大杯")
# Words before a title that make another office of it.
_BEFORE = r"shadow|former|ex|deputy|vice|assistant|junior|影子|前任|副|候任"
# Two spellings of one of them: an ex-mayor is a former mayor.
_SAME_BEFORE = {"ex": "former", "前任": "former"}
_BEFORE_WORDS = frozenset(_BEFORE.split("|"))
# A capitalised word between a name and its own ticker ("Bitcoin Gold (BTG)") makes a name
# of its own, unless it only says what kind of company it is.
_TICKED = (r"(?-i:(?!(?:Inc|Corp|Ltd|Plc|Co|Group|Holdings|Company|AG|SA|NV)\b)"
           r"[A-Z][a-z]+(?=\s*\([A-Z0-9]{2,6}\)))")
_SEP = r"[\s\-]*"
# Offices a question names without a person ("what did the chancellor say").
TITLES = CaseBlind(
    r"(?<![a-z])(?:chancellor|president|prime minister|minister|secretary|governor|mayor"
    r"|speaker|chairman|chair|ceo|leader)(?![a-z])|总统|总理|首相|部长|主席|市长|州长|财政大臣|大臣|议长"
    r"|董事长|总裁")
_OFFICE = CaseBlind(
    r"(?:(?<![a-z])(?:former|ex)[\s-]+)?"  # "ex greyfield mayor" asks the former one
    r"(?:(?<![a-z])(?!(?:the|a|an|what|who|did|does|is|was|said|says|of|new|our|their|his"
    rf"|her)\b)[a-z]+\s+){{0,2}}(?:常务副|副)?(?:{TITLES.pattern})")
# A model name in a question: a word and the numbers and generation words that follow it.
_MODEL = CaseBlind(
    r"(?<![a-z0-9])(?!(?:is|the|a|an|of|for|how|what|much|and|or|vs)\b)[a-z][a-z0-9\-]*"
    rf"(?:\s*(?:[a-z]*\d[\w.\-]*|gen|generation|series|mark|mk|{_QUALIFIERS})(?![a-z]))+")
_TOKEN = re.compile(rf"[{CJK_CHARS}]+|[A-Za-z]+|\d+(?:\.\d+)?")


def _tokens(name: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(name)]


EDITION = CaseBlind(rf"(?<![A-Za-z0-9])(?:{_QUALIFIERS})(?![A-Za-z0-9])|{_ZH_QUALIFIERS}")


@cached_if_short(maxsize=1024)  # asked of the same titles and questions per candidate
def editions(text: str) -> frozenset[str]:
    """The edition and team words a text names (pro, lite, 标准版, women)."""
    return frozenset(m.group(0).casefold() for m in EDITION.finditer(text))


def is_qualifier(token: str) -> bool:
    """Whether a word only names an edition or a team of something (Pro, Max, 女足)."""
    return bool(re.fullmatch(f"{_QUALIFIERS}|{_ZH_QUALIFIERS}", token, re.IGNORECASE))


@functools.lru_cache(maxsize=2048)
def _family(name: str) -> tuple[re.Pattern[str], frozenset[str]] | None:
    """A pattern matching the name with any qualifiers around and inside it, and the
    qualifiers the name itself carries."""
    tokens = _tokens(name)
    office = bool(TITLES.search(name))  # "Google Assistant" and "Miami Vice" keep theirs
    core = [t for t in tokens if not is_qualifier(t) and not (office and t in _BEFORE_WORDS)]
    if not core:
        return None
    qual = (rf"(?:{_SEP}(?:(?:{_QUALIFIERS})(?![A-Za-z0-9])|{_ZH_QUALIFIERS}|\.\d+"
            rf"|{_TICKED}))")
    parts = [re.escape(t) + (r"(?![a-z])" if t.isalpha() else r"(?![0-9a-z])")
             if t.isascii() else re.escape(t) for t in core]
    inner = "".join(f"({qual}*+){_SEP}{p}" for p in parts[1:])
    # Possessive: a qualifier that follows is never given back to read a bare mention.
    pattern = rf"(?<![A-Za-z0-9])((?:(?:{_BEFORE})(?![a-z]){_SEP})*+){parts[0]}{inner}({qual}*+)"
    asked = frozenset(_SAME_BEFORE.get(t, t) for t in tokens
                      if is_qualifier(t) or (office and t in _BEFORE_WORDS))
    return re.compile(pattern, re.IGNORECASE), asked


def family_mentions(name: str, text: str) -> list[bool]:
    """Every mention of the name's family in the text: True for the asked one itself."""
    family = _family(name)
    if family is None:
        return []
    pattern, asked = family
    found = []
    for match in pattern.finditer(text):
        # Only qualifiers, decimals and ticked names reach the groups: all of them count.
        said = frozenset(_SAME_BEFORE.get(t, t) for t in _tokens(" ".join(g for g in
                                                                         match.groups() if g)))
        # The standard edition is the name itself when the name asks no other edition:
        # "霁光Z9多少钱" is answered by "霁光Z9标准版售价3999元起".
        found.append(said == asked or (said - _STANDARD == asked and not asked))
    return found


_STANDARD = frozenset({"标准版"})


def only_variants(name: str, text: str) -> bool:
    """Whether the text names the asked name only as part of longer names (or a sibling
    without an asked qualifier): it mentions the family, never the name itself."""
    found = family_mentions(name, text)
    return bool(found) and not any(found)


def asked_models(topic: str, known: list[str]) -> list[str]:
    """Model names a question gives without the planner knowing them ("snapdragon 8 gen 5"),
    with the qualifiers it gave; none that a known subject already spells."""
    found = [m.group(0).strip() for m in _MODEL.finditer(topic) if re.search(r"\d", m.group(0))]
    spelt = [k.casefold() for k in known]
    return [m for m in found if not any(m.casefold() in k or k in m.casefold() for k in spelt)]


def asked_titles(topic: str) -> list[str]:
    """Offices the question names, with the word that says which ("the chancellor", "the
    home secretary")."""
    return [m.group(0).strip() for m in _OFFICE.finditer(topic)]
