"""The fill_mask page's views."""
