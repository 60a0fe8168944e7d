"""The basic-blocks study: BHive's blocks measured with their pages mapped, llvm-mca-16 beside them."""
