"""The attention page's views."""
