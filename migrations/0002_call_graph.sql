-- codebase-indexer schema, version 2: the resolved call graph. `refs.kind` also takes
-- `reference` (a definition named as a value), `local` and `field` (variables and their types).
-- `edges` (from version 1) now holds one row per resolved reference site, pointing from the
-- definition where the reference is written to the definition it names, plus `contains`
-- rows from each definition to its children. References that resolve to nothing in the
-- repository are kept in `unresolved`, never dropped.

-- The module (qualified-name prefix) of each file's definitions: `flask.app`, `net/http`,
-- `java.util`. Resolution looks modules up by this name.
ALTER TABLE files ADD COLUMN module TEXT NOT NULL DEFAULT '';
CREATE INDEX files_module ON files(module);

-- The reference sites resolution reads for every file, whatever changed: imports, member
-- types, bases and typed file-level variables (a file node's id is a multiple of 2^19).
CREATE INDEX refs_scope ON refs(node_id, seq)
    WHERE kind IN ('import', 'field', 'inherits', 'implements')
       OR (kind = 'local' AND module IS NOT NULL AND node_id % 524288 = 0);

CREATE TABLE unresolved (
    source_id  INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,            -- calls, references, imports, inherits, implements, decorates
    name       TEXT NOT NULL,            -- the reference as written: `self.session.get`, `os.path.join`
    key        TEXT NOT NULL,            -- its last name (`get`, `join`): what trace-callers matches
    reason     TEXT NOT NULL,            -- external, not_found, ambiguous, local, dynamic, low_confidence
    candidates INTEGER NOT NULL DEFAULT 0, -- same-named definitions in the repository
    line       INTEGER NOT NULL
);
CREATE INDEX unresolved_source ON unresolved(source_id);
CREATE INDEX unresolved_key ON unresolved(key);

-- Every call site with what became of it, resolved or not.
CREATE VIEW calls AS
    SELECT s.qualified_name AS caller, t.qualified_name AS callee, e.confidence, e.strategy,
           f.path, e.line
    FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id
    JOIN files f ON f.id = s.file_id
    WHERE e.kind = 'calls'
    UNION ALL
    SELECT s.qualified_name, u.name || ' [' || u.reason || ']', NULL, u.reason, f.path, u.line
    FROM unresolved u JOIN nodes s ON s.id = u.source_id JOIN files f ON f.id = s.file_id
    WHERE u.kind = 'calls';
