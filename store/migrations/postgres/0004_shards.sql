-- Version 4 (PostgreSQL): the shards of sharded tests (issue 43, docs/server.md
-- "Sharded tests"). A shard's upload is verified and recomputed like any
-- upload but stored as a shard of its test, not as a run: shard_sets has one
-- row per sharded test of a test item (set_key identifies the test: its
-- schedule digest and shard count), shard_uploads one row per shard stored,
-- its files in the directory dir (relative to the files directory). A
-- shard's index is stored once per test, and a shard bundle once per test
-- item. state is waiting (shards missing), merging (every shard stored,
-- the merged run not yet), merged (run_id is the merged run) or failed
-- (reason says why). Times are Unix nanoseconds (UTC).
CREATE TABLE shard_sets (
    test_item_id    TEXT NOT NULL REFERENCES test_items(id),
    set_key         TEXT NOT NULL,
    shard_count     BIGINT NOT NULL,
    schedule_sha256 TEXT NOT NULL,
    state           TEXT NOT NULL,
    reason          TEXT NOT NULL,
    run_id          BIGINT REFERENCES runs(id),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (test_item_id, set_key)
);
CREATE INDEX shard_sets_state ON shard_sets(state);
CREATE INDEX shard_sets_run ON shard_sets(run_id);
CREATE TABLE shard_uploads (
    test_item_id  TEXT NOT NULL,
    set_key       TEXT NOT NULL,
    shard_index   BIGINT NOT NULL,
    upload_id     TEXT NOT NULL,
    bundle_digest TEXT NOT NULL,
    status        TEXT NOT NULL,
    status_reason TEXT NOT NULL,
    dir           TEXT NOT NULL,
    received_at   BIGINT NOT NULL,
    PRIMARY KEY (test_item_id, set_key, shard_index),
    FOREIGN KEY (test_item_id, set_key) REFERENCES shard_sets(test_item_id, set_key)
);
CREATE UNIQUE INDEX shard_uploads_bundle ON shard_uploads(test_item_id, bundle_digest);
