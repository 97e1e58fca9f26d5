"""Services: settings, model bundles, the shared caches, warm start, budgets and page flow (imports only bertlens)."""
