"""UI: page chrome, the lesson panel, shared controls, chart and table plumbing (imports state and services)."""
