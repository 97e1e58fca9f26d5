"""The next_sentence page's views."""
