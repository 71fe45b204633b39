"""The one Markdown encoder (``render/encoders.md``, MANIFEST.md and the cut-over's report): it refuses nothing. A
client library's message is data to show: Markdown's marks are escaped, a line feed is a line break inside the cell,
any other control or invisible character is named; a table's row stays one line, whatever the value holds."""

from __future__ import annotations

import pytest

from secure_mirror.render.encoders import md


def _client_error() -> str:
    """librdkafka's own message for a setting out of its range, as an identity's process carries it back."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    with pytest.raises(KafkaException) as refused:
        AdminClient({"bootstrap.servers": "127.0.0.1:9", "socket.timeout.ms": "600000"})
    return f"KafkaException: {refused.value}"


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("fence", "fence"),
        ("a | b", "a \\| b"),
        ("`x` <b> *y* _z_ [l] & \\", "\\`x\\` \\<b\\> \\*y\\* \\_z\\_ \\[l\\] \\& \\\\"),
        ("one\ntwo\n", "one<br>two<br>"),
        ("crlf\r\n", "crlf`U+000D`<br>"),
        ("bell\x07 nel\x85 rlo\u202e", "bell`U+0007` nel`U+0085` rlo`U+202E`"),
        ("<br>", "\\<br\\>"),  # the text <br> stays text: only a line feed is a break
        (True, "true"),
    ],
)
def test_every_value_is_encoded_and_none_refused(value, encoded):
    assert md(value) == encoded


def test_a_client_librarys_message_with_a_line_feed_keeps_its_words_on_one_row():
    message = _client_error()
    assert message.endswith('300000\n"}')  # what librdkafka says, line feed and all
    row = f"| fence | failed | {md(message)} |"
    assert "\n" not in row and row.count(" | ") == 2
    assert md(message).endswith('value 600000 is outside allowed range 10..300000<br>"}')
