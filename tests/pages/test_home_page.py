"""The home page: the lessons first, then every page as a card with its thumbnail, link and promise."""

from __future__ import annotations

from PIL import Image

from bertlens.models import BUNDLED_MODEL
from components.state.params import PAGE_TITLES, PAGES
from components.views.home.cards import PROMISES, THUMBNAIL_WIDTH, THUMBNAILS, thumbnail


def test_every_page_has_a_card_and_a_thumbnail():
    assert [stem for stem, _ in PROMISES] == [p for p in PAGES if p != "home"]
    for stem, promise in PROMISES:
        with Image.open(THUMBNAILS / f"{stem}.png") as image:
            assert image.size == (THUMBNAIL_WIDTH, THUMBNAIL_WIDTH * 9 // 16), stem  # 16:9, same size
        assert promise[-1] in ".?" and "\n" not in promise  # one line


def test_home_shows_lessons_then_the_page_cards(open_page):
    at = open_page("pages/home.py", BUNDLED_MODEL)
    assert not at.exception
    assert [h.value for h in at.header] == ["Lessons", "Pages"]
    images = [h.proto.body for h in at.get("html") if "<img" in h.proto.body]
    assert images == [thumbnail(stem) for stem, _ in PROMISES]
    assert all('alt=""' in image for image in images)  # decorative: the link says where it goes
    captions = " ".join(c.value for c in at.caption)
    for stem, promise in PROMISES:
        assert promise[1:] in captions
        assert any(PAGE_TITLES[stem] in m.value for m in at.markdown), (
            stem
        )  # the link (a page run alone: a Markdown link)
