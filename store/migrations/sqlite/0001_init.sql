-- The results store, version 1 (SQLite). Times are Unix nanoseconds (UTC),
-- booleans 0 or 1, JSON documents text.
CREATE TABLE test_items (
    id               TEXT PRIMARY KEY,
    party            TEXT NOT NULL,
    info             TEXT NOT NULL,
    retest_allowance INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    public_key       BLOB,
    token_hash       BLOB UNIQUE,
    expires_at       INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    status           TEXT NOT NULL
);

CREATE TABLE runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    run_key        TEXT NOT NULL UNIQUE,
    test_item_id   TEXT REFERENCES test_items(id),
    attempt        INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    scenario       TEXT NOT NULL,
    mode           TEXT NOT NULL,
    arrival_mode   INTEGER NOT NULL,
    status         TEXT NOT NULL,
    status_reason  TEXT NOT NULL,
    verdict_kind   TEXT NOT NULL,
    verdict_pass   INTEGER NOT NULL,
    verdict_word   TEXT NOT NULL,
    sut            TEXT NOT NULL,
    qsl            TEXT NOT NULL,
    model          TEXT NOT NULL,
    data_set       TEXT NOT NULL,
    sut_config     TEXT NOT NULL,
    system_info    TEXT NOT NULL,
    system_key     TEXT NOT NULL,
    config_key     TEXT NOT NULL,
    workload_key   TEXT NOT NULL,
    series_key     TEXT NOT NULL,
    bundle_digest  TEXT NOT NULL,
    headline_name  TEXT NOT NULL,
    headline_value DOUBLE PRECISION NOT NULL,
    headline_unit  TEXT NOT NULL,
    result_json    TEXT NOT NULL,
    version        TEXT NOT NULL,
    source         TEXT NOT NULL,
    dir            TEXT NOT NULL,
    started_at     INTEGER NOT NULL,
    recorded_at    INTEGER NOT NULL
);
CREATE INDEX runs_series ON runs(series_key, recorded_at);
CREATE INDEX runs_item ON runs(test_item_id, attempt);
CREATE INDEX runs_digest ON runs(bundle_digest);

CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    unit   TEXT NOT NULL,
    better TEXT NOT NULL,
    value  DOUBLE PRECISION NOT NULL,
    count  INTEGER NOT NULL,
    mean   DOUBLE PRECISION,
    stddev DOUBLE PRECISION,
    min    DOUBLE PRECISION,
    max    DOUBLE PRECISION,
    p50    DOUBLE PRECISION,
    p90    DOUBLE PRECISION,
    p95    DOUBLE PRECISION,
    p99    DOUBLE PRECISION,
    p999   DOUBLE PRECISION,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE artifacts (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    role   TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes  INTEGER NOT NULL,
    path   TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE events (
    seq          INTEGER PRIMARY KEY,
    test_item_id TEXT NOT NULL,
    run_id       INTEGER NOT NULL,
    attempt      INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    at           INTEGER NOT NULL,
    detail       TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL
);
CREATE INDEX events_item ON events(test_item_id, seq);

CREATE TABLE thresholds (
    series_key  TEXT NOT NULL,
    metric      TEXT NOT NULL,
    test        TEXT NOT NULL,
    max_change  DOUBLE PRECISION NOT NULL,
    lookback    INTEGER NOT NULL,
    min_samples INTEGER NOT NULL,
    min_change  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (series_key, metric, test)
);
