-- codebase-indexer schema, version 6.
--
-- `refs_scope` covers the columns resolution reads from it. Every run that resolves loads
-- these rows (imports, typed fields, bases) for the whole repository; with only the key in the
-- index, each row cost a seek into `refs`, which is many times larger (Django: the scan from
-- 23 ms to 9 ms for 2 MB more index).
DROP INDEX refs_scope;
CREATE INDEX refs_scope ON refs(node_id, seq, kind, name, module, alias, line)
    WHERE kind = 'import' OR kind = 'field' OR kind = 'inherits' OR kind = 'implements'
       OR (kind = 'local' AND module IS NOT NULL AND node_id % 524288 = 0);

-- FTS5 writes its pending terms out as a new segment whenever they exceed `hashsize` (1 MB by
-- default), and merges the segments as they pile up. 16 MB makes a full build's full-text
-- index far fewer segments to merge: the Linux kernel's from 13.1 s to 9.6 s.
INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('hashsize', 16777216);
