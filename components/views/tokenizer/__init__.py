"""The tokenizer page's views."""
