"""Citations from a BibTeX bibliography (extension.py), read by bibliography.py, worded by style.py."""
