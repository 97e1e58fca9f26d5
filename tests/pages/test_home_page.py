"""The home page: the lessons first, then every page as a card with its thumbnail, link and promise."""

from __future__ import annotations

from PIL import Image

from bertlens.models import BUNDLED_MODEL
from bertlens.pages import PAGES, TOOL_PAGES
from components.views.home.cards import CARDS, THUMBNAIL_WIDTH, THUMBNAILS, thumbnail


def test_every_page_has_a_card_and_a_thumbnail():
    assert [page.stem for page in CARDS] == list(TOOL_PAGES) == [p.stem for p in PAGES if p.stem != "home"]
    for page in CARDS:
        with Image.open(THUMBNAILS / f"{page.stem}.png") as image:
            assert image.size == (THUMBNAIL_WIDTH, THUMBNAIL_WIDTH * 9 // 16), page.stem  # 16:9, same size
        assert page.blurb[-1] in ".?" and "\n" not in page.blurb  # one line


def test_home_shows_lessons_then_the_page_cards(open_page):
    at = open_page("pages/home.py", BUNDLED_MODEL)
    assert not at.exception
    assert [h.value for h in at.header] == ["Lessons", "Live class", "Pages"]
    images = [h.proto.body for h in at.get("html") if "<img" in h.proto.body]
    assert images == [thumbnail(page.stem) for page in CARDS]
    assert all('alt=""' in image for image in images)  # decorative: the link says where it goes
    captions = " ".join(c.value for c in at.caption)
    for page in CARDS:
        assert page.blurb[1:] in captions
        assert any(page.title in m.value for m in at.markdown), page.stem  # the link (a page run alone: Markdown)
