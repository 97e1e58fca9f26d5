"""The home page's views."""
