-- codebase-indexer schema, version 8.
--
-- A whole-file word index of the code files, for ranking files by BM25 over all their text
-- (the definitions' full-text index sees names, signatures and docstrings only). A word is
-- a lowercase identifier sub-token of the file's path or text (`text::words`).

-- For each word, the code files holding it: `postings` is a sequence of unsigned LEB128
-- varint pairs (file id, count), by file id, each id after the first written as the
-- difference from the one before.
CREATE TABLE file_terms (
    term     TEXT PRIMARY KEY,
    postings BLOB NOT NULL
) WITHOUT ROWID;

-- How many words each code file holds, for BM25's length normalization.
CREATE TABLE file_words (
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    words   INTEGER NOT NULL
);
