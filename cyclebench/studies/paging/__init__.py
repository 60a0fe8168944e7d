"""The paging study: what software pays to live without virtual addressing (split stacks, tree
arrays), and what 2 MiB pages buy. See study.py."""
