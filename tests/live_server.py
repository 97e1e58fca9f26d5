"""A real ``streamlit run app.py`` server for the browser, concurrency and class-load tests.

The logic lives in ``scripts/server.py`` (``scripts/class_load.py`` starts servers the same way).
"""

from scripts.server import Server, model_loads, peak_rss_bytes, running_server, streamlit_server

__all__ = ["Server", "model_loads", "peak_rss_bytes", "running_server", "streamlit_server"]
