-- Version 3 (PostgreSQL): the tester's dashboard sessions. A session is kept
-- server-side so that signing out ends it for good and a second service
-- process sharing the database knows it. The session id itself is never
-- stored, only its SHA-256 (hex), so a copy of the database cannot sign in.
-- csrf_token is the session's synchronizer token for the dashboard's forms.
-- Times are Unix nanoseconds (UTC). Signing out deletes the row.
CREATE TABLE sessions (
    id_hash      TEXT PRIMARY KEY,
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX sessions_expires ON sessions(expires_at);
