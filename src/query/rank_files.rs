//! Files ranked for a natural-language query (an issue text, a question, a traceback): the
//! primitive that `rank-files`, the evaluation and the context packers share.
//!
//! What the numbers on the Django SWE-bench tasks supported (see README, "Retrieval
//! evaluation"), and nothing else:
//! - each file scores as its best definition's BM25 over name, qualified name, sub-tokens,
//!   signature and docstring (`nodes_fts`), for any of the query's words;
//! - tests, migrations and documentation weigh less: a query about behaviour is answered by
//!   the code that has it;
//! - identifiers and paths written as code in the query (`QuerySet.update`, `get_user_model`,
//!   `models/query.py`) name files directly; that list is fused with the first by reciprocal
//!   rank;
//! - so is a third: code files by Okapi BM25 over their whole text (the word index of
//!   `store::terms`), which finds what the issue quotes from bodies (messages, flags, calls)
//!   on every visible evaluation set, not only Django (docs/measurements.md).
//!
//! Tried and left out, for no gain: graph centrality personalized to the first hits, summing
//! a file's best definitions instead of taking the best.

use crate::lang;
use crate::store::writer::FLAG_TEST;
pub use crate::text::words;
use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// A file, its score for the query (higher is better) and the definition that earned it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RankedFile {
    pub path: String,
    pub score: f64,
    /// The best-matching definition's qualified name (absent for files named by path only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// Definitions read per query: enough for every file in reach of the top; more only costs.
pub const TOP_DEFINITIONS: usize = 500;
/// Column weights of `nodes_fts`: name, qualified name, sub-tokens, signature, docstring.
const BM25_WEIGHTS: &str = "10.0, 4.0, 6.0, 1.0, 0.5";
/// Score factor of tests, migrations and documentation.
const SECONDARY: f64 = 0.3;
/// Reciprocal rank fusion: the usual constant, and the weight of the list of files the query
/// names as code.
const RRF_K: f64 = 60.0;
const NAMED_WEIGHT: f64 = 0.5;
/// The weight of the list of files by BM25 over their whole text.
const FILE_TEXT_WEIGHT: f64 = 1.0;
/// Files of that list fused: past these, a file's whole-text score says little.
const FILE_TEXT_FILES: usize = 100;
/// Okapi BM25's usual parameters.
const BM25_K1: f64 = 1.5;
const BM25_B: f64 = 0.75;
/// A name defined in more files than this names none of them in particular.
const NAMED_MAX_FILES: usize = 20;

/// The files that best answer `query`, best first, at most `limit`.
pub fn rank_files(conn: &Connection, query: &str, limit: usize) -> Result<Vec<RankedFile>> {
    let Some(every_word) = any_word_query(query) else {
        crate::error::invalid!("the query {query:?} has no words to look for");
    };
    // The words FTS5 gives no weight to cost time and change no ranking (but when they are
    // all there is).
    let fts_query = weighted_word_query(conn, query)?.unwrap_or(every_word);
    let by_definition = by_best_definition(conn, &fts_query)?;
    let named = named_files(conn, query)?;
    let by_text = by_file_text(conn, query, FILE_TEXT_FILES)?;

    // Reciprocal rank fusion of the three lists; a file in none is not ranked.
    let mut fused: HashMap<i64, RankedFile> = HashMap::new();
    for (rank, (file, path, symbol)) in by_definition.into_iter().enumerate() {
        let score = 1.0 / (RRF_K + rank as f64 + 1.0);
        let symbol = Some(symbol);
        fused.insert(
            file,
            RankedFile {
                path,
                score,
                symbol,
            },
        );
    }
    for (list, weight) in [(named, NAMED_WEIGHT), (by_text, FILE_TEXT_WEIGHT)] {
        for (rank, (file, path)) in list.into_iter().enumerate() {
            let entry = fused.entry(file).or_insert(RankedFile {
                path,
                score: 0.0,
                symbol: None,
            });
            entry.score += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut ranked: Vec<RankedFile> = fused
        .into_values()
        .map(|mut f| {
            // Scaled so that a first place in the definitions' list alone scores 1.
            f.score = (f.score * (RRF_K + 1.0) * 1e4).round() / 1e4;
            f
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    ranked.truncate(limit);
    Ok(ranked)
}

/// A file row's id, path and weight, from columns id, path, language, flags (first).
fn weighted_file(r: &rusqlite::Row) -> rusqlite::Result<(i64, String, f64)> {
    let path: String = r.get(1)?;
    let language: String = r.get(2)?;
    let w = weight(&path, &language, r.get(3)?);
    Ok((r.get(0)?, path, w))
}

/// A definition matching a query: its node, its file (id, path) and its BM25 score, weighted
/// by its file's kind (tests, migrations and documentation discounted).
#[derive(Debug, Clone)]
pub struct DefinitionHit {
    pub node: i64,
    pub file: i64,
    pub path: String,
    pub qualified_name: String,
    pub score: f64,
}

/// The query's search words as one FTS5 query matching any of them; `None` when it has none.
pub fn any_word_query(query: &str) -> Option<String> {
    let mut terms = BTreeSet::new();
    words(query, false, |w| {
        terms.insert(w.to_string());
    });
    or_query(&terms)
}

/// `any_word_query` without the words at least half the definitions hold. BM25 gives those
/// no weight (FTS5 floors the IDF of a term that common at 1e-6), but scoring every row that
/// holds one is most of a long query's time: `def` is in 62% of Django's definitions, and
/// the query made of three changed functions runs in 48 ms instead of 105 without it. For
/// long queries (code): looking up each word's frequency costs about 0.1 ms a word.
pub fn weighted_word_query(conn: &Connection, query: &str) -> Result<Option<String>> {
    let mut terms = BTreeSet::new();
    words(query, false, |w| {
        terms.insert(w.to_string());
    });
    if terms.is_empty() {
        return Ok(None);
    }
    crate::store::attach_fts_vocabulary(conn)?;
    let rows: i64 = conn.query_row("SELECT count(*) FROM nodes", [], |r| r.get(0))?;
    let mut rows_with = conn.prepare_cached(&format!(
        "SELECT doc FROM temp.{} WHERE term = ?1",
        crate::store::FTS_VOCABULARY
    ))?;
    let mut weightless = Vec::new();
    for t in &terms {
        // A word the vocabulary does not hold as written (the tokenizer may fold it) stays.
        let n: Option<i64> = rows_with.query_row([t], |r| r.get(0)).optional()?;
        if n.is_some_and(|n| 2 * n >= rows) {
            weightless.push(t.clone());
        }
    }
    for t in &weightless {
        terms.remove(t);
    }
    Ok(or_query(&terms))
}

fn or_query(terms: &BTreeSet<String>) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// The `limit` definitions with the best BM25 for `fts_query` (from `any_word_query`), in
/// the order SQLite returns them, each with its weighted score.
pub fn definition_hits(
    conn: &Connection,
    fts_query: &str,
    limit: usize,
) -> Result<Vec<DefinitionHit>> {
    let mut q = conn.prepare_cached(&format!(
        "SELECT n.file_id, f.path, f.language, f.flags, n.qualified_name, t.score, n.id \
         FROM (SELECT rowid, -bm25(nodes_fts, {BM25_WEIGHTS}) AS score FROM nodes_fts \
               WHERE nodes_fts MATCH ?1 ORDER BY bm25(nodes_fts, {BM25_WEIGHTS}) LIMIT ?2) t \
         JOIN nodes n ON n.id = t.rowid JOIN files f ON f.id = n.file_id"
    ))?;
    let mut hits = Vec::new();
    let mut rows = q.query(rusqlite::params![fts_query, limit as i64])?;
    while let Some(r) = rows.next()? {
        let (file, path, w) = weighted_file(r)?;
        hits.push(DefinitionHit {
            node: r.get(6)?,
            file,
            path,
            qualified_name: r.get(4)?,
            score: r.get::<_, f64>(5)? * w,
        });
    }
    Ok(hits)
}

/// Files (id, path) by their best definition's weighted BM25 for the query, secondary files
/// discounted, with that definition's qualified name.
fn by_best_definition(conn: &Connection, fts_query: &str) -> Result<Vec<(i64, String, String)>> {
    // file -> (score, path, qualified name)
    let mut best: HashMap<i64, (f64, String, String)> = HashMap::new();
    for hit in definition_hits(conn, fts_query, TOP_DEFINITIONS)? {
        let entry = best
            .entry(hit.file)
            .or_insert((f64::MIN, hit.path, String::new()));
        // Ties go to the first qualified name, whatever order SQLite returns rows in.
        if hit.score > entry.0 || (hit.score == entry.0 && hit.qualified_name < entry.2) {
            entry.0 = hit.score;
            entry.2 = hit.qualified_name;
        }
    }
    let mut files: Vec<(i64, (f64, String, String))> = best.into_iter().collect();
    files.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.1 .2.cmp(&b.1 .2)));
    Ok(files
        .into_iter()
        .map(|(file, (_, path, symbol))| (file, path, symbol))
        .collect())
}

/// The `limit` code files (id, path) with the best Okapi BM25 over their whole text (path
/// included) for the query's words, each counted as often as the query repeats it; tests and
/// migrations discounted as in `weight`. The IDF is Lucene's, `ln(1 + (N - df + 0.5) / (df +
/// 0.5))`, which stays positive for words most files hold.
fn by_file_text(conn: &Connection, query: &str, limit: usize) -> Result<Vec<(i64, String)>> {
    let mut asked: HashMap<String, u32> = HashMap::new();
    words(query, false, |w| {
        *asked.entry(w.to_string()).or_default() += 1
    });
    let (files, mean_words) = crate::store::terms::collection(conn)?;
    if files == 0 || asked.is_empty() {
        return Ok(Vec::new());
    }
    let mut lengths: HashMap<i64, f64> = HashMap::new();
    let mut q = conn.prepare_cached("SELECT file_id, words FROM file_words")?;
    for row in q.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))? {
        let (file, n) = row?;
        lengths.insert(
            file,
            BM25_K1 * (1.0 - BM25_B + BM25_B * n / mean_words.max(1.0)),
        );
    }
    let mut postings = conn.prepare_cached("SELECT postings FROM file_terms WHERE term = ?1")?;
    let mut scores: HashMap<i64, f64> = HashMap::new();
    let mut asked: Vec<(String, u32)> = asked.into_iter().collect();
    // Summed in one order, so equal queries give equal scores to the last bit.
    asked.sort_unstable();
    for (word, times) in &asked {
        let Some(blob) = postings
            .query_row([word], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        else {
            continue;
        };
        let mut held = Vec::new();
        crate::store::terms::decode(&blob, |file, n| held.push((file, f64::from(n))));
        let df = held.len() as f64;
        let idf = (1.0 + (files as f64 - df + 0.5) / (df + 0.5)).ln();
        let weight = idf * (BM25_K1 + 1.0) * f64::from(*times);
        for (file, n) in held {
            let norm = lengths.get(&file).copied().unwrap_or(BM25_K1);
            *scores.entry(file).or_default() += weight * n / (n + norm);
        }
    }
    let mut best: Vec<(i64, f64)> = scores.into_iter().collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    // Discounts only lower a file: unless more than `limit` of these are discounted, the
    // best `limit` after discounts are among them.
    best.truncate(limit * 2);
    let mut file =
        conn.prepare_cached("SELECT id, path, language, flags FROM files WHERE id = ?1")?;
    let mut weighted = Vec::with_capacity(best.len());
    for (id, score) in best {
        if let Some((id, path, w)) = file.query_row([id], weighted_file).optional()? {
            weighted.push((id, path, score * w));
        }
    }
    weighted.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
    Ok(weighted
        .into_iter()
        .take(limit)
        .map(|(id, path, _)| (id, path))
        .collect())
}

/// 1 for code, less for tests, migrations and documentation.
fn weight(path: &str, language: &str, flags: i64) -> f64 {
    let secondary = flags & FLAG_TEST != 0
        || path.contains("/migrations/")
        || lang::by_name(language).is_none();
    if secondary {
        SECONDARY
    } else {
        1.0
    }
}

/// Files the query names as code, most clearly named first: paths (`db/models/query.py`),
/// and definitions whose name is written as an identifier (`QuerySet.update`,
/// `get_user_model`, `ForeignKey`); a name defined in many files names none of them.
fn named_files(conn: &Connection, query: &str) -> Result<Vec<(i64, String)>> {
    // file -> (how clearly named, path)
    let mut named: HashMap<i64, (f64, String)> = HashMap::new();
    let mut by_name = conn.prepare_cached(
        "SELECT DISTINCT n.file_id, f.path, f.language, f.flags FROM nodes n \
         JOIN files f ON f.id = n.file_id WHERE n.name = ?1 AND n.kind <> 'File'",
    )?;
    let mut by_path = conn.prepare_cached(
        "SELECT id, path, language, flags FROM files WHERE path = ?1 OR path LIKE ?2 ESCAPE '\\'",
    )?;
    for token in query.split(|c: char| !(c.is_alphanumeric() || "_./".contains(c))) {
        let token = token.trim_matches(|c| c == '.' || c == '/');
        if looks_like_path(token) {
            let suffix = format!("%/{}", token.replace('%', "\\%").replace('_', "\\_"));
            for row in by_path.query_map([token, suffix.as_str()], weighted_file)? {
                let (file, path, w) = row?;
                named.entry(file).or_insert((0.0, path)).0 += 2.0 * w;
            }
            continue;
        }
        for part in token.split('.').filter(|p| looks_like_identifier(p)) {
            let files = by_name
                .query_map([part], weighted_file)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            if files.is_empty() || files.len() > NAMED_MAX_FILES {
                continue;
            }
            let share = 1.0 / files.len() as f64;
            for (file, path, w) in files {
                named.entry(file).or_insert((0.0, path)).0 += share * w;
            }
        }
    }
    let mut files: Vec<(i64, (f64, String))> = named.into_iter().collect();
    files.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    Ok(files
        .into_iter()
        .map(|(file, (_, path))| (file, path))
        .collect())
}

/// `query.py`, `django/db/models/query.py`: a file name with an extension of a language.
fn looks_like_path(token: &str) -> bool {
    token
        .rsplit_once('.')
        .is_some_and(|(stem, _)| !stem.is_empty())
        && lang::for_path(token).is_some()
}

/// Written as code, not as a word: `snake_case`, `camelCase`, `CapWords` with an inner
/// capital, longer than two characters.
pub fn looks_like_identifier(word: &str) -> bool {
    let trimmed = word.trim_matches('_');
    if trimmed.len() <= 2 || !trimmed.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let inner_capital = trimmed.chars().skip(1).any(|c| c.is_uppercase())
        && trimmed.chars().any(|c| c.is_lowercase());
    trimmed.contains('_') || inner_capital
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;
    use crate::store::{self, Mode};

    /// Ten functions whose signatures all hold `amount`, one that also holds `refund`.
    fn ledger() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let mut code: String = (0..10)
            .map(|i| format!("def entry_{i}(amount):\n    return amount + {i}\n\n"))
            .collect();
        code.push_str("def refund_amount(amount, refund):\n    return amount - refund\n");
        std::fs::write(root.join("ledger.py"), code).unwrap();
        let db = dir.path().join("index.db");
        index::run(&index::test_run_options(&root, &db)).unwrap();
        let conn = store::open(&db, Mode::ReadOnly).unwrap();
        (dir, conn)
    }

    #[test]
    fn words_most_definitions_hold_are_left_out_and_the_ranking_stays() {
        let (_dir, conn) = ledger();
        let text = "amount refund café";
        let all = any_word_query(text).unwrap();
        let weighted = weighted_word_query(&conn, text).unwrap().unwrap();
        assert_eq!(all, "\"amount\" OR \"café\" OR \"refund\"");
        // `amount` is in 11 of the 12 rows (the file node lacks it); a word the vocabulary
        // does not hold as written stays.
        assert_eq!(weighted, "\"café\" OR \"refund\"");
        // On a read-only connection, which stays read-only.
        assert!(conn.execute_batch("CREATE TABLE t(x)").is_err());
        let names = |q: &str| -> Vec<(String, i64)> {
            definition_hits(&conn, q, 5)
                .unwrap()
                .into_iter()
                .map(|h| (h.qualified_name, (h.score * 1000.0).round() as i64))
                .collect()
        };
        let best = names(&weighted);
        assert_eq!(best[0].0, "ledger.refund_amount");
        assert_eq!(best, names(&all)[..best.len()]);
        // Nothing but common words: no query at all.
        assert_eq!(weighted_word_query(&conn, "amount").unwrap(), None);
    }

    /// A repository where the words an issue quotes are only in function bodies (a message,
    /// a flag), one file per language, each beside a file whose definitions or text hold
    /// one of the same words.
    #[test]
    fn files_whose_text_holds_the_issue_words_rank_first_in_every_language() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let files: &[(&str, &str)] = &[
            (
                "app/upload.py",
                "def store(f):\n    raise ValueError('chunk checksum mismatch while resuming upload')\n",
            ),
            ("app/resume.py", "def resume_upload():\n    pass\n"),
            (
                "cmd/sync.go",
                "package cmd\n\nfunc Run() error {\n\treturn errors.New(\"lockfile stale: remove --force-unlock\")\n}\n",
            ),
            ("cmd/lock.go", "package cmd\n\nfunc LockFile() {}\n"),
            (
                "web/render.js",
                "export function draw(el) {\n  throw new Error('canvas context lost during resize');\n}\n",
            ),
            ("web/menu.js", "export function open() { return 'context menu'; }\n"),
            (
                "src/parse.rs",
                "pub fn parse(s: &str) -> Result<u8, String> {\n    Err(format!(\"octal escape out of range in {s}\"))\n}\n",
            ),
            ("src/limits.rs", "pub fn limits() -> &'static str {\n    \"out of bounds\"\n}\n"),
        ];
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let db = dir.path().join("index.db");
        index::run(&index::test_run_options(&root, &db)).unwrap();
        let conn = store::open(&db, Mode::ReadOnly).unwrap();
        for (issue, wanted) in [
            (
                "Resuming an upload fails: chunk checksum mismatch",
                "app/upload.py",
            ),
            (
                "sync says lockfile stale and asks for --force-unlock",
                "cmd/sync.go",
            ),
            (
                "canvas context lost during resize of the window",
                "web/render.js",
            ),
            ("octal escape out of range for \\777", "src/parse.rs"),
        ] {
            let ranked = rank_files(&conn, issue, 3).unwrap();
            assert_eq!(ranked[0].path, wanted, "{issue}: {ranked:?}");
        }
        // The word index holds code files only, each word's files by id.
        let terms: i64 = conn
            .query_row("SELECT count(*) FROM file_words", [], |r| r.get(0))
            .unwrap();
        assert_eq!(terms, files.len() as i64);
    }

    #[test]
    fn words_are_split_sub_tokens_without_stopwords() {
        let mut got = Vec::new();
        words("The getUserName() of a QuerySet, x = 1", true, |w| {
            got.push(w.to_string())
        });
        assert_eq!(
            got,
            [
                "get",
                "user",
                "name",
                "getusername",
                "query",
                "set",
                "queryset"
            ]
        );
        let mut fts = Vec::new();
        words("get_user_model", false, |w| fts.push(w.to_string()));
        assert_eq!(fts, ["get", "user", "model"]);
    }

    #[test]
    fn code_is_told_from_prose() {
        for code in ["get_user_model", "QuerySet", "getUser", "__init__x"] {
            assert!(looks_like_identifier(code), "{code}");
        }
        for prose in ["Hello", "queryset", "URL", "a_", "it's"] {
            assert!(!looks_like_identifier(prose), "{prose}");
        }
        assert!(looks_like_path("django/db/models/query.py"));
        assert!(looks_like_path("query.py"));
        assert!(!looks_like_path("e.g"));
        assert!(!looks_like_path(".py"));
    }
}
