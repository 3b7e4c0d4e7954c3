-- codebase-indexer schema, version 9.
--
-- A word index of the definitions, for ranking them by BM25 without scoring every row of
-- `nodes_fts` that holds any of a long query's words (most of a query's time before). Its
-- words are those `nodes_fts` finds in a definition's name, qualified name (without `#k`),
-- name sub-tokens, signature and docstring, lowercased, search words only (`text::words`).

-- For each word, the definitions holding it: `postings` is a sequence of unsigned LEB128
-- varint triples (node id, weighted count, length), by node id, each id after the first
-- written as the difference from the one before. The weighted count sums, over the five
-- columns, the word's count times the column's weight in half-units (20, 8, 12, 2, 1); the
-- length is how many words the definition holds in all. `meta` holds the collection's size:
-- `definition_rows` definitions, `definition_words` words.
CREATE TABLE definition_terms (
    term     TEXT PRIMARY KEY,
    postings BLOB NOT NULL
) WITHOUT ROWID;
