"""The quick checks in front of costly patterns skip only text the pattern finds nothing in."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pmflow_gateway.contract import salience, text

_PIECES = ["[", "(", "{", "【", "（", "<", "]", ")", "}", "】", "）", ">", ".", "。", "dot", "点",
           " ", "  ", "\t", "a", "z", "0", "9", "evil", "com", "广州", "°", "℃", "度", "度数",
           "-", "~", "到", "12", "3.5", "\u3000", "\u00a0"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
@example("evil (点) com")
@example("a。b")
@example("x . y")
@example("a\t. a")
def test_a_text_said_to_hide_no_dot_has_none_the_pattern_reads(form):
    # `detection_form` asks only of text with its white space made one space ("a\t. a" is
    # read as "a . a", which the quick check sees).
    form = text._one_spaced(form)
    if not text._may_hide_a_dot(form):
        assert text._OBFUSCATED_DOT.sub(".", form) == form


@settings(max_examples=500, deadline=None)
@given(_TEXT)
@example("a \t b")
@example("a\u3000b")
def test_one_spaced_is_every_run_of_white_space_made_one_space(form):
    assert text._one_spaced(form) == text._SPACES.sub(" ", form)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
@example("18-25°C")
@example("最高气温15度")
@example("12度数")
@example("-3 ~ -8 ℃")
@example("12.5 °")
@example("到12度")
@example("5.度")
@example(".0°")
@example("1.2.0°")
@example("3.-5°")
def test_a_degree_is_read_only_where_the_pattern_finds_one(sentence):
    assert salience.reads_a_degree(sentence) == bool(salience._READING.search(sentence))


@settings(max_examples=300, deadline=None)
@given(_TEXT)
@example("evil(dot)com")
@example("访问天气。公司")
def test_hosts_are_named_as_the_full_scan_names_them(sentence):
    form = text.detection_form(sentence)
    tokens = (text._unglued(m.group(0).lstrip(".")) for m in text._DOTTED.finditer(form))
    expected = [t.lower().strip("-_") for t in tokens if text._host_like(t)]
    assert text.hosts_named(sentence) == expected


def test_a_run_of_space_before_many_degree_signs_is_read_once_per_sign():
    # Read back from each sign, a pattern that gave white space back would retry the run
    # for every split of it: minutes on this text. Taken whole, it is read once per sign.
    assert salience.reads_a_degree(" " * 3000 + "°" * 3000) is False
    assert salience.reads_a_degree(" ~ " * 2000 + "1°") is True
