"""Numbered figures and tables, section labels, and the {numref} and {ref} roles that name them."""
