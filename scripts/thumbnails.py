"""Make the home page's thumbnails: each page's main view, screenshotted in Chromium from a real server.

    python -m scripts.thumbnails            # writes static/thumbnails/<page>.png (bundled encoder, offline)

They are files in the repository (a few kB each), so the home page draws no chart and needs no model to
show them; run this again when a page's look changes. The views use the bundled encoder; fill-mask and
next-sentence need heads it lacks, so they are drawn with the tiny random pre-training model and blurred:
their look is right, their words and numbers are random and must not be read.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from PIL import Image, ImageFilter
from playwright.sync_api import Browser, FloatRect, sync_playwright

from bertlens.models import BUNDLED_MODEL
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from components.views.home.cards import THUMBNAIL_WIDTH, THUMBNAILS
from scripts.server import running_server
from scripts.visits import CHROMIUM, CHROMIUM_ARGS

VIEWS = {  # page -> (link parameters, what to photograph: the view's first chart or table)
    "tokenizer": ({"text": "Tokenization and padding are fundamental."}, '[data-testid="stTabs"]'),
    "anatomy": ({"anatomy_tab": "Parameters"}, '[data-testid="stTabs"]'),
    "fill_mask": ({"text": "The capital of France is [MASK]."}, ".js-plotly-plot"),
    "next_sentence": ({"nsp_tab": "Ranking"}, '[data-testid="stTabs"]'),
    "attention": ({"attn_tab": "Heatmap", "mean": "true", "attn_layer": "3"}, ".js-plotly-plot"),
    "senses": ({"preset": "apple", "senses_tab": "Map"}, ".js-plotly-plot"),
}
HEADS = {"fill_mask", "next_sentence"}  # pages drawn with the tiny pre-training model


def photograph(base_url: str, page: str, browser: Browser) -> bytes:
    params, selector = VIEWS[page]
    tab = browser.new_page(viewport={"width": 1280, "height": 2400})
    try:
        tab.goto(f"{base_url}/{page}?{urlencode(params)}")
        app = tab.locator('[data-testid="stApp"]')
        tab.locator('[data-testid="stMain"] h1').first.wait_for(timeout=120_000)
        view = tab.locator(f'[data-testid="stMain"] {selector}').first
        view.wait_for(timeout=120_000)
        tab.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                              ".getAttribute('data-test-script-state') === 'notRunning'", timeout=120_000)  # fmt: skip
        tab.wait_for_timeout(1500)  # charts finish drawing
        assert app.count() == 1
        box = view.bounding_box()
        assert box is not None
        height = box["width"] * 9 / 16  # the top of the view, 16:9
        clip: FloatRect = {"x": box["x"], "y": box["y"], "width": box["width"], "height": height}
        return tab.screenshot(clip=clip)
    finally:
        tab.close()


def save(png: bytes, path: Path, blur: bool) -> None:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.thumbnail((THUMBNAIL_WIDTH, THUMBNAIL_WIDTH))
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(2))
    image.save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args()

    THUMBNAILS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        tiny = save_random_bert(Path(tmp) / "tiny", random_bert_config(**TINY_CONFIG))
        for model, pages in ((BUNDLED_MODEL, set(VIEWS) - HEADS), (str(tiny), HEADS)):
            with running_server(model, Path(tmp) / "server.log") as server:
                for page in sorted(pages):
                    save(photograph(server.url, page, browser), THUMBNAILS / f"{page}.png", blur=page in HEADS)
                    print(f"{page}: {THUMBNAILS / f'{page}.png'}")
        browser.close()


if __name__ == "__main__":
    main()
