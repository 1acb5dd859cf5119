// Package shardtest holds the end-to-end tests of a test split over
// several load generators (docs/sharding.md, issue 43): the aimeter
// binary, built once, runs the shards of one seeded schedule as separate
// processes against `aimeter serve openai` or the null SUT, with a common
// start; `aimeter merge` joins them, and the tests check the merged bundle
// against a one-host run of the same test (the schedule, bit for bit),
// against DuckDB over the shards' Parquet records (the exact percentiles
// of the union), and against `aimeter report` and `aimeter check` (the
// verdict). They run the commands of docs/sharding.md's one-machine
// example as the page gives them.
//
// The package has no code of its own; its tests need DuckDB from PyPI
// (scripts/install-peers.sh kserve-python) and fail without it under
// AIMETER_REQUIRE_PEERS=1, as in CI.
package shardtest
