"""State: the link schema, URL-bound widgets, page state across pages and the model chosen (imports services)."""
