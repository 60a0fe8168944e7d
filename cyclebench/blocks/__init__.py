"""Real basic blocks (``cyclebench block``): a compiled program's block run as the measured code,
every page it touches mapped onto one shared page (docs/block.md).

* ``code``     -- the block's bytes: hex, decoding (iced-x86), the basic-block check and the final branch;
* ``extract``  -- bytes from an objdump listing or from an ELF symbol (GNU binutils);
* ``memory``   -- the documented start state and the static address check (page crossing, 4K aliasing);
* ``measure``  -- one block through ``measure()`` with fault-mapped pages, as a result document;
* ``bulk``     -- a blocks CSV measured by two pinned workers into a resumable results file;
* ``predictors`` -- the predictor interface (llvm-mca; ``cyclebench predict`` plugs in with one line);
* ``errors``   -- MAPE and Kendall's tau of a predictor against the measurements, per application.
"""
