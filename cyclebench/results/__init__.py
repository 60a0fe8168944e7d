"""Saved results read back and put side by side: ``loaders`` (asm/inst JSON, inst JSONL, study
folders), ``figures`` (every measured figure with its command, code and warnings), ``machines``
(one instruction table with a column per CPU), ``compare`` (old vs new with a Mann-Whitney U
test) and ``page`` (the HTML report's sections). Nothing here measures."""
