"""The live class's charts: a student's typed word is drawn as text, never as plotly's markup."""

from __future__ import annotations

import sqlite3

import pytest

from bertlens.rooms import StoreUnavailable
from components.services.rooms import SqliteRooms
from components.ui.classroom import _bars


def test_a_typed_word_with_tags_is_a_label_not_markup():
    fig = _bars(['<a href="https://x">win</a>', "<b>big</b>"], [2, 1], ["#000"] * 2, ["", ""], "The class's words", "n")
    assert fig.data[0].y == ("&lt;a href=&quot;https://x&quot;&gt;win&lt;/a&gt;", "&lt;b&gt;big&lt;/b&gt;")


def test_a_store_that_fails_says_so_instead_of_raising_its_database_error(tmp_path, monkeypatch):
    store = SqliteRooms(tmp_path / "rooms.sqlite3")
    room, _ = store.open_room("discover", 1, 0.0)

    def locked(self: SqliteRooms) -> sqlite3.Connection:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(SqliteRooms, "_connect", locked)
    with pytest.raises(StoreUnavailable, match="nothing was saved"):
        store.room(room.code, 1.0)
