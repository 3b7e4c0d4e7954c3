-- codebase-indexer schema, version 1. Readable by the stock sqlite3 shell (3.40+).
-- Ids derive from content (a hash of the path, plus the definition's ordinal in its file),
-- so an incremental re-index and a full rebuild of the same tree hold the same rows.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE files (
    id        INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,      -- repository-relative, '/'-separated
    language  TEXT NOT NULL,             -- 'python', ..., or 'text' for other text files
    size      INTEGER NOT NULL,          -- bytes on disk
    mtime_ns  INTEGER NOT NULL,
    hash      TEXT NOT NULL,             -- blake3 of the bytes on disk, hex
    lines     INTEGER NOT NULL,
    flags     INTEGER NOT NULL DEFAULT 0 -- 1 test, 2 syntax errors recovered, 4 invalid UTF-8 replaced, 8 parse abandoned
);
CREATE INDEX files_language ON files(language);

-- The text served by get-source (invalid UTF-8 replaced by U+FFFD; byte ranges refer to it).
CREATE TABLE file_contents (
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    content TEXT NOT NULL
);

CREATE TABLE nodes (
    id             INTEGER PRIMARY KEY,
    file_id        INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    kind           TEXT NOT NULL,        -- File, Module, Class, Interface, Enum, Type, Function, Method, Constant
    name           TEXT NOT NULL,
    qualified_name TEXT NOT NULL,        -- unique; a repeated name gets '#2', '#3' in (path, byte) order
    parent_id      INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
    signature      TEXT,
    docstring      TEXT,
    start_line     INTEGER NOT NULL,     -- line of the definition's name (Python: the def line)
    end_line       INTEGER NOT NULL,
    start_byte     INTEGER NOT NULL,     -- decorators and annotations included
    end_byte       INTEGER NOT NULL,
    name_tokens    TEXT NOT NULL         -- identifier sub-tokens: parseHTTPRequest -> parse http request
);
CREATE INDEX nodes_file ON nodes(file_id);
CREATE INDEX nodes_name ON nodes(name);
CREATE INDEX nodes_qualified_name ON nodes(qualified_name);
CREATE INDEX nodes_parent ON nodes(parent_id);
CREATE INDEX nodes_kind ON nodes(kind);  -- counts by kind without reading every row

-- Raw reference sites kept from extraction: calls, imports, bases, decorators.
CREATE TABLE refs (
    node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,            -- order within the file
    kind    TEXT NOT NULL,               -- call, import, inherits, implements, decorator
    name    TEXT NOT NULL,               -- callee text, imported name, base or decorator
    module  TEXT,                        -- for imports: the module imported from
    alias   TEXT,
    line    INTEGER NOT NULL,
    PRIMARY KEY (node_id, seq)
) WITHOUT ROWID;

CREATE TABLE edges (
    source_id  INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    target_id  INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,            -- calls, imports, inherits, implements, decorates, references, contains
    confidence REAL NOT NULL,
    strategy   TEXT NOT NULL,
    line       INTEGER
);
CREATE INDEX edges_source ON edges(source_id);
CREATE INDEX edges_target ON edges(target_id);

-- Full-text search over definitions, kept in sync with `nodes` by triggers. Token positions
-- are not stored (detail=column): a third smaller and faster to build; the price is that
-- multi-word phrase queries ("a b") are not available, single terms and prefixes are.
CREATE VIRTUAL TABLE nodes_fts USING fts5(
    name, qualified_name, name_tokens, signature, docstring,
    content='nodes', content_rowid='id', detail=column
);
CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes BEGIN
    INSERT INTO nodes_fts(rowid, name, qualified_name, name_tokens, signature, docstring)
    VALUES (new.id, new.name, new.qualified_name, new.name_tokens, new.signature, new.docstring);
END;
CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, name, qualified_name, name_tokens, signature, docstring)
    VALUES ('delete', old.id, old.name, old.qualified_name, old.name_tokens, old.signature, old.docstring);
END;
CREATE TRIGGER nodes_fts_update AFTER UPDATE ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, name, qualified_name, name_tokens, signature, docstring)
    VALUES ('delete', old.id, old.name, old.qualified_name, old.name_tokens, old.signature, old.docstring);
    INSERT INTO nodes_fts(rowid, name, qualified_name, name_tokens, signature, docstring)
    VALUES (new.id, new.name, new.qualified_name, new.name_tokens, new.signature, new.docstring);
END;

-- Views for common questions from the shell.
CREATE VIEW definitions AS
    SELECT n.id, n.kind, n.qualified_name, f.path, n.start_line, n.end_line, n.signature
    FROM nodes n JOIN files f ON f.id = n.file_id
    WHERE n.kind <> 'File';
CREATE VIEW files_by_language AS
    SELECT language, count(*) AS files, sum(lines) AS lines, sum(size) AS bytes
    FROM files GROUP BY language;
CREATE VIEW call_sites AS
    SELECT r.name AS callee, n.qualified_name AS caller, f.path, r.line
    FROM refs r JOIN nodes n ON n.id = r.node_id JOIN files f ON f.id = n.file_id
    WHERE r.kind = 'call';
