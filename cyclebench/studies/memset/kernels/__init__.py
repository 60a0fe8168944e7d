"""Assembly sources of the memset study's kernels (a package only so that packaging ships them)."""
