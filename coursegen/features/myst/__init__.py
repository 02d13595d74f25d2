"""What authors of Jupyter Book (MyST) and MkDocs type, read the coursegen way.

MyST's admonitions become callouts, `{tab-set}` accessible tabs and `{include}` the text of another
Markdown file of the course; every other directive, and MkDocs' admonitions, content tabs and
snippets, is a located warning naming what to write instead (never a silent code block).
"""
