"""The shared machinery of studies: the results store, the run engine, exporters, the summary
builder and the registry. A study is one folder under cyclebench/studies/ built on these."""
