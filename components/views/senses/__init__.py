"""The senses page's views."""
