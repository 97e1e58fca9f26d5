"""The anatomy page's views."""
