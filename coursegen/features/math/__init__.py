"""Math: LaTeX to MathML at build time with Temml in embedded V8 (temml.py), numbered equations and
their references (extension.py)."""
