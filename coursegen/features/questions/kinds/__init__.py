"""Question kinds that live in a module of their own: each checks its block, shapes its study sheet and names
its attributes (ATTRS), and extension.py, structure.py and blocks.py hand the kind to it."""
