"""BERT Lens's Streamlit layers, above the pure core ``bertlens``. Imports point down only:

    bertlens  <-  services  <-  state  <-  ui  <-  views.<page>  <-  pages/, app.py

``services`` (settings, models, caches, warm start, budgets, page flow), ``state`` (the link schema, URL-bound
widgets, page state, the model chosen), ``ui`` (page chrome, the lesson panel, shared controls, chart and table
plumbing) and ``views`` (one package per page: its sections and figure builders). No view imports another page's
views: what two pages share is a public ``ui`` part. ``tests/ops/test_import_layers.py`` enforces the rule.
"""
