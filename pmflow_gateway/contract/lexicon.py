"""How common an English word is: a word no everyday text uses ("regus", "bozeman",
"halvora") is a name in a question typed in lower case. And which Chinese words are everyday:
the characters before the first one at the head of a question are a name no list knows.

The frequencies are wordfreq's (Robyn Speer; data CC BY-SA 4.0, built from Wikipedia,
subtitles, news, books, web text and more): its "small" English list, every word used at least
once per million words. The file is read directly in its documented cBpack format (a gzipped
msgpack list of frequency bins, one per centibel): importing wordfreq itself costs over a
second, the file about 15 ms.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
from pathlib import Path

import msgpack

COMMON_ZIPF = 3.0
"""Zipf frequency (log10 of uses per billion words) from which a word is everyday English:
3.0 is once per million words, the small list's floor."""


@functools.cache
def _english() -> dict[str, float]:
    return _frequencies("small_en.msgpack.gz")


@functools.cache
def _chinese() -> tuple[frozenset[str], dict[str, float]]:
    """The words of wordfreq's small Chinese list of two characters or more (its words are
    cut by jieba: every word used at least once per million), and how common each character
    is as a word of its own."""
    frequencies = _frequencies("small_zh.msgpack.gz")
    return (frozenset(word for word in frequencies if len(word) >= 2),
            {word: zipf for word, zipf in frequencies.items() if len(word) == 1})


def _frequencies(name: str) -> dict[str, float]:
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the wordfreq package (word frequencies) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / name
    bins = msgpack.loads(gzip.decompress(path.read_bytes()), raw=False)
    header, bins = bins[0], bins[1:]
    if not isinstance(header, dict) or header.get("format") != "cB":
        raise RuntimeError(f"unexpected word-frequency file format in {path}")
    return {word: 9.0 - centibels / 100 for centibels, words in enumerate(bins)
            for word in words}


def zipf(word: str) -> float:
    """How common an English word is (Zipf scale, 0 when it is not in the list)."""
    return _english().get(word.casefold(), 0.0)


def is_everyday_word(word: str) -> bool:
    return zipf(word) >= COMMON_ZIPF


def is_chinese_word(text: str) -> bool:
    """Whether `text` is an everyday Chinese word of two characters or more (目前, 此前)."""
    return text in _chinese()[0]


MAX_ZH_WORD_CHARS = 4
NAME_CHAR_ZIPF = 4.5
"""A name ends in a character rarer than this as a word of its own (汀 of 雁汀, 峥 of 韩立峥),
or in one of `NAME_ENDS`: a head that ends otherwise (能坐几, 那它, 展到) is words the list
cut otherwise, not a name."""


def unknown_chinese_head(text: str) -> str:
    """The characters at the head of a Chinese text before the first everyday word starts:
    a name no list knows ("澄州" of 澄州电动车不戴头盔罚多少钱, "林予安澄州" of 林予安澄州演唱会).
    Empty when an everyday word starts the text, or within its first two characters."""
    words, chars = _chinese()
    head = text
    for at in range(len(text)):
        if not "\u4e00" <= text[at] <= "\u9fff" or any(
                text[at:at + n] in words for n in range(2, MAX_ZH_WORD_CHARS + 1)):
            head = text[:at]
            break
    if len(head) in (2, 3) and head[0] in CHINESE_SURNAMES:
        return head  # a person's name is whole: 祁海峰 is not 祁海
    # A name ends at its suffix: 青港队 of 青港队签奥卡福花了多少转会费.
    end = next((i for i, c in enumerate(head) if i >= 1 and c in NAME_ENDS), None)
    if end is not None:
        head = head[:end + 1]
    # Common characters after the rare ones are words the list cut otherwise (北坪 of
    # 北坪白条猪批发价), unless a name ends in them (澄州, 金枫山).
    while len(head) > 2 and chars.get(head[-1], 0.0) >= NAME_CHAR_ZIPF and (
            head[-1] not in NAME_ENDS):
        head = head[:-1]
    if len(head) < 2 or (chars.get(head[-1], 0.0) >= NAME_CHAR_ZIPF
                         and head[-1] not in NAME_ENDS):
        return ""  # 展到 of 展到什么时候, 能坐几 of 能坐几公里: words, not a name
    return head


# The characters a place's or a team's name commonly ends in, each common as a word of its own
# (州, 山, 队; 和 of 曦和, 永和).
# The commonest Chinese surnames: a head of two or three characters that starts with one is a
# person's name, kept whole.
CHINESE_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕"
    "丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃"
    "武戴莫孔向汤祁樊")
NAME_ENDS = frozenset("州市县区镇乡村湾江河湖海山川岛港城路街桥门楼阁园台坊庄堡口洲峰队和")


TYPO_OF_ZIPF = 4.5
"""A rare word one letter away from a word at least this common (once per 30,000 words) is a
misspelling of it ("anual", "wether", "tomorow"), not a name."""
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_WORD_CHARS = 24  # longer tokens are no word anybody misspelt


def is_misspelling(word: str) -> bool:
    """Whether a word that is not everyday English is one edit (a letter dropped, added or
    two swapped) from a very common word."""
    word = word.casefold()
    if (len(word) > MAX_WORD_CHARS or is_everyday_word(word) or not word.isascii()
            or not word.isalpha()):
        return False
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    # No changed letter: "brann" is a name, not "brain"; typing drops, doubles and swaps.
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b for a, b in splits for c in _LETTERS}
    words = _english()
    return any(words.get(edit, 0.0) >= TYPO_OF_ZIPF for edit in edits - {word})
