-- codebase-indexer schema, version 4: what redaction took out of each file's text before it
-- was parsed and stored (where and what kind of secret, never its value).

CREATE TABLE redactions (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line    INTEGER NOT NULL,            -- 1-based line where the secret started
    kind    TEXT NOT NULL                -- aws-key, github-token, private-key, password, ...
);
CREATE INDEX redactions_file ON redactions(file_id);
