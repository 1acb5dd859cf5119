-- Version 2 (PostgreSQL): the database itself refuses a replayed upload, so
-- that several service processes sharing one database cannot each store a
-- copy. An upload ID is spent once per test item, and a bundle (its manifest's
-- SHA-256) is stored once as a test item's run. Local runs stay free to be
-- recorded twice (aimeter results add).
CREATE TABLE uploads (
    test_item_id TEXT NOT NULL,
    upload_id    TEXT NOT NULL,
    received_at  BIGINT NOT NULL,
    PRIMARY KEY (test_item_id, upload_id)
);
INSERT INTO uploads (test_item_id, upload_id, received_at)
    SELECT test_item_id, detail::jsonb->>'upload_id', at FROM events
    WHERE kind = 'upload_received' AND detail::jsonb->>'upload_id' IS NOT NULL
    ON CONFLICT DO NOTHING;
CREATE UNIQUE INDEX runs_item_bundle ON runs(bundle_digest) WHERE test_item_id IS NOT NULL;
