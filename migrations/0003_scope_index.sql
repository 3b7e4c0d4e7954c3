-- codebase-indexer schema, version 3: `refs_scope` tests the kind with plain equalities.
-- SQLite evaluates a partial index's `IN (...)` list by building a temporary table for every
-- inserted row; the same condition written as `=` terms costs a comparison each.

DROP INDEX refs_scope;
CREATE INDEX refs_scope ON refs(node_id, seq)
    WHERE kind = 'import' OR kind = 'field' OR kind = 'inherits' OR kind = 'implements'
       OR (kind = 'local' AND module IS NOT NULL AND node_id % 524288 = 0);
