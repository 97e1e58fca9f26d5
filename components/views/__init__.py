"""Views: one package per page, its sections and figure builders (imports ui, state, services; never another page)."""
