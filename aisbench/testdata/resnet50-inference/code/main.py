"""The package's inference entry point; it needs the Ais-Bench LoadGen
module, which this test package does not have."""
import loadgen  # noqa: F401  (the Ais-Bench LoadGen wheel)
