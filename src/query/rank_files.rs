//! Files ranked for a natural-language query (an issue text, a question, a traceback): the
//! primitive that `rank-files`, the evaluation and the context packers share.
//!
//! What the numbers on every visible evaluation set together supported (docs/measurements.md,
//! "Retrieval evaluation"), and nothing else:
//! - each file scores as its best definition's BM25 over name, qualified name, sub-tokens,
//!   signature and docstring (`nodes_fts`), for any of the query's words;
//! - tests, documentation and other text files weigh less: a query about behaviour is
//!   answered by the code that has it; so does code in a language the repository barely uses
//!   (under 15% of its code files: helper scripts, type declarations beside the sources),
//!   a vendored copy of another project and code its own documentation declares deprecated;
//! - identifiers and paths written as code in the query (`QuerySet.update`, `get_user_model`,
//!   `models/query.py`) name files directly; that list is fused with the first by reciprocal
//!   rank;
//! - so is a third: text files by Okapi BM25 over their whole text (the word index of
//!   `store::terms`), which finds what the issue quotes from bodies (messages, flags, calls)
//!   on every visible evaluation set, not only Django, and the documentation, configuration
//!   and data files some fixes edit (docs/measurements.md);
//! - and a fourth, the crash site: the innermost frame of a quoted stack trace that is the
//!   repository's own code;
//! - the lines an issue copies from the repository's issue templates (checklists, headings,
//!   instructions) are not the reporter's words and are left out of the query.
//!
//! Tried and left out, for no gain: graph centrality personalized to the first hits, summing
//! a file's best definitions instead of taking the best, a prior for files others import or
//! call, a discount for files whose definitions others repeat.

use crate::lang;
use crate::store::writer::{FLAG_DEPRECATED, FLAG_TEST};
pub use crate::text::words;
use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};
use rustc_hash::{FxHashMap, FxHashSet};
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
    /// The file ranked above that this one nearly copies (see `copies_after_originals`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<String>,
}

/// Definitions read per query: enough for every file in reach of the top; more only costs.
pub const TOP_DEFINITIONS: usize = 500;
/// FTS5's `bm25()` parameters, which `definition_hits` reproduces with the column weights of
/// `text::DEFINITION_COLUMN_WEIGHTS` (name, qualified name, sub-tokens, signature, docstring:
/// 10, 4, 6, 1, 0.5).
const FTS_K1: f64 = 1.2;
const FTS_B: f64 = 0.75;
/// Score factor of tests, documentation, other text files and minor languages' code.
const SECONDARY: f64 = 0.3;
/// A language (dialects together: C with C++, TypeScript with TSX) with fewer than this
/// share of the repository's code files is a minor one.
const MINOR_LANGUAGE_SHARE: f64 = 0.15;
/// Reciprocal rank fusion: its constant (20 to 30 did best on every visible set together,
/// docs/measurements.md), and the weight of the list of files the query names as code.
const RRF_K: f64 = 20.0;
const NAMED_WEIGHT: f64 = 0.5;
/// The weight of the list of files by BM25 over their whole text.
const FILE_TEXT_WEIGHT: f64 = 1.5;
/// Files of that list fused: past these, a file's whole-text score says little.
const FILE_TEXT_FILES: usize = 100;
/// The weight of the crash site (`crash_site`): 0.2 to 1.5 each lifted Acc@1 over the 654
/// visible tasks (+7 to +15 tasks); from 0.3 a Go panic on a nil receiver, fixed in its
/// caller, loses its first place (docs/measurements.md, "The crash site").
const CRASH_SITE_WEIGHT: f64 = 0.25;
/// Stack frames read from a query at most.
const MAX_FRAMES: usize = 64;
/// Okapi BM25's usual parameters.
const BM25_K1: f64 = 1.5;
const BM25_B: f64 = 0.75;
/// A name defined in more files than this names none of them in particular.
const NAMED_MAX_FILES: usize = 20;
/// A query line with fewer words than this is not told from the reporter's own.
const TEMPLATE_LINE_WORDS: usize = 4;

/// The files that best answer `query`, best first, at most `limit`.
pub fn rank_files(conn: &Connection, query: &str, limit: usize) -> Result<Vec<RankedFile>> {
    rank_own_query(conn, &own_query(conn, query)?, limit)
}

/// `rank_files` of a query that `own_query` has already taken the template lines out of.
pub fn rank_own_query(conn: &Connection, query: &str, limit: usize) -> Result<Vec<RankedFile>> {
    Ok(hits_and_files(conn, query, limit)?.1)
}

/// The best `TOP_DEFINITIONS` definition hits for a query `own_query` has cleaned, and the
/// `limit` files `rank_files` ranks from them: one reading of the files' weights and of the
/// definitions for a caller that needs both (the query pack).
pub fn hits_and_files(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<(Vec<DefinitionHit>, Vec<RankedFile>)> {
    if !has_words(query) {
        crate::error::invalid!("the query {query:?} has no words to look for");
    }
    let weights = FileWeights::load(conn)?;
    let hits = weighted_definition_hits(conn, &weights, query, TOP_DEFINITIONS)?;
    let by_definition = by_best_definition(&hits);
    let named = named_files(conn, &weights, query)?;
    let by_text = by_file_text(conn, &weights, query, FILE_TEXT_FILES)?;
    let crash = crash_site(conn, &weights, query)?;

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
                copy_of: None,
            },
        );
    }
    let crash = crash.into_iter().collect();
    for (list, weight) in [
        (named, NAMED_WEIGHT),
        (by_text, FILE_TEXT_WEIGHT),
        (crash, CRASH_SITE_WEIGHT),
    ] {
        for (rank, (file, path)) in list.into_iter().enumerate() {
            let entry = fused.entry(file).or_insert(RankedFile {
                path,
                score: 0.0,
                symbol: None,
                copy_of: None,
            });
            entry.score += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut ranked: Vec<(i64, RankedFile)> = fused
        .into_iter()
        .map(|(id, mut f)| {
            // Scaled so that a first place in the definitions' list alone scores 1.
            f.score = (f.score * (RRF_K + 1.0) * 1e4).round() / 1e4;
            (id, f)
        })
        .collect();
    ranked.sort_by(|(_, a), (_, b)| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    copies_after_originals(conn, &mut ranked)?;
    ranked.truncate(limit);
    Ok((hits, ranked.into_iter().map(|(_, f)| f).collect()))
}

/// Files at the head of the ranking compared with each other for copies.
const COPY_WINDOW: usize = 15;
/// Two files whose distinct tokens overlap this much (shared over all) are copies.
const COPY_OVERLAP: f64 = 0.6;
/// A file with fewer distinct tokens than this has too little text to be called a copy.
const COPY_MIN_TOKENS: usize = 30;
/// Bytes of a file compared: copies share their beginnings, and a query reads no more.
const COPY_PREFIX_BYTES: usize = 64 << 10;

/// Moves each file of the ranking's head that nearly copies a file ranked above it (a bundle
/// built from the sources, an older version of the documentation, one more variant of a
/// tutorial) after the head's other files, marked with the file it copies and scored as the
/// file before it: one text in several copies takes one place, not several.
fn copies_after_originals(conn: &Connection, ranked: &mut [(i64, RankedFile)]) -> Result<()> {
    let head = ranked.len().min(COPY_WINDOW);
    let mut read = conn.prepare_cached("SELECT content FROM file_contents WHERE file_id = ?1")?;
    let mut contents = Vec::with_capacity(head);
    for (id, _) in &ranked[..head] {
        let content: Option<String> = read.query_row([id], |r| r.get(0)).optional()?;
        contents.push(content.unwrap_or_default());
    }
    let tokens: Vec<FxHashSet<&str>> = contents.iter().map(|c| distinct_tokens(c)).collect();
    let mut originals: Vec<usize> = Vec::new();
    for i in 0..head {
        match originals.iter().find(|&&j| is_copy(&tokens[i], &tokens[j])) {
            Some(&j) => ranked[i].1.copy_of = Some(ranked[j].1.path.clone()),
            None => originals.push(i),
        }
    }
    // A stable sort: the originals keep their order, and the copies theirs after them.
    ranked[..head].sort_by_key(|(_, f)| f.copy_of.is_some());
    for i in 1..head {
        ranked[i].1.score = ranked[i].1.score.min(ranked[i - 1].1.score);
    }
    Ok(())
}

/// The distinct runs of letters, digits and underscores in the first `COPY_PREFIX_BYTES`.
fn distinct_tokens(content: &str) -> FxHashSet<&str> {
    let mut end = content.len().min(COPY_PREFIX_BYTES);
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    content[..end]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect()
}

fn is_copy(a: &FxHashSet<&str>, b: &FxHashSet<&str>) -> bool {
    if a.len() < COPY_MIN_TOKENS || b.len() < COPY_MIN_TOKENS {
        return false;
    }
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let shared = small.iter().filter(|t| large.contains(*t)).count();
    shared as f64 >= COPY_OVERLAP * (a.len() + b.len() - shared) as f64
}

/// How much a file's matches count: 1 for the repository's code, `SECONDARY` for tests,
/// files that are not code, and code in a minor language.
struct FileWeights {
    /// Language families with under `MINOR_LANGUAGE_SHARE` of the code files.
    minor: Vec<&'static str>,
    /// Files their documentation declares deprecated, and the folders of the Go packages
    /// declared so (a Go package is its folder: one file's package comment speaks for all).
    deprecated_files: FxHashSet<String>,
    deprecated_packages: FxHashSet<String>,
    /// Folders of third-party copies (`third_party_folders`), each ending in `/`.
    third_party: Vec<String>,
}

impl FileWeights {
    fn load(conn: &Connection) -> Result<FileWeights> {
        let mut q =
            conn.prepare_cached("SELECT language, count(*) FROM files GROUP BY language")?;
        let mut families: Vec<(&'static str, f64)> = Vec::new();
        for row in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)))? {
            let (language, files) = row?;
            if lang::by_name(&language).is_none() {
                continue;
            }
            let family = family(&language);
            match families.iter_mut().find(|(f, _)| *f == family) {
                Some(entry) => entry.1 += files,
                None => families.push((family, files)),
            }
        }
        let total: f64 = families.iter().map(|(_, n)| n).sum();
        let minor = families
            .into_iter()
            .filter(|(_, n)| *n < MINOR_LANGUAGE_SHARE * total)
            .map(|(f, _)| f)
            .collect();
        let mut weights = FileWeights {
            minor,
            deprecated_files: FxHashSet::default(),
            deprecated_packages: FxHashSet::default(),
            third_party: third_party_folders(conn)?,
        };
        let mut q = conn.prepare_cached(&format!(
            "SELECT path, language FROM files WHERE flags & {FLAG_DEPRECATED} <> 0"
        ))?;
        for row in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            let (path, language) = row?;
            if language == "go" {
                weights
                    .deprecated_packages
                    .insert(folder(&path).to_string());
            } else {
                weights.deprecated_files.insert(path);
            }
        }
        Ok(weights)
    }

    fn of(&self, path: &str, language: &str, flags: i64) -> f64 {
        let deprecated = self.deprecated_files.contains(path)
            || (language == "go" && self.deprecated_packages.contains(folder(path)));
        let third_party = self
            .third_party
            .iter()
            .any(|f| path.starts_with(f.as_str()));
        if deprecated
            || third_party
            || is_secondary(language, flags)
            || self.minor.contains(&family(language))
        {
            SECONDARY
        } else {
            1.0
        }
    }

    /// A file row's id, path and weight, from columns id, path, language, flags (first).
    fn file(&self, r: &rusqlite::Row) -> rusqlite::Result<(i64, String, f64)> {
        let path: String = r.get(1)?;
        let language = r.get_ref(2)?.as_str().unwrap_or_default();
        let w = self.of(&path, language, r.get(3)?);
        Ok((r.get(0)?, path, w))
    }
}

/// Tests and files that are not code: what a query about behaviour is rarely answered by.
pub fn is_secondary(language: &str, flags: i64) -> bool {
    flags & FLAG_TEST != 0 || lang::by_name(language).is_none()
}

/// Folders that hold a copy of another project: a licence file below the top whose text is
/// not the repository's own licence (a vendored library under its own terms, `decNumber/`
/// in jq, jQuery in Django's admin), told apart from a workspace's member packages, which
/// repeat the project's licence (with their own copyright lines). A repository without a
/// licence at its top says nothing this way, and neither does a folder whose code uses the
/// project's (`stands_alone`).
fn third_party_folders(conn: &Connection) -> Result<Vec<String>> {
    let mut q = conn.prepare_cached(
        "SELECT f.path, f.language, c.content FROM files f \
         JOIN file_contents c ON c.file_id = f.id \
         WHERE f.path LIKE '%licen%' OR f.path LIKE '%copying%' ORDER BY f.path",
    )?;
    let mut own: Vec<FxHashSet<String>> = Vec::new();
    let mut nested: Vec<(String, FxHashSet<String>)> = Vec::new();
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let path = r.get_ref(0)?.as_str().unwrap_or_default();
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let language = r.get_ref(1)?.as_str().unwrap_or_default();
        let is_licence =
            name.contains("license") || name.contains("licence") || name.starts_with("copying");
        if !is_licence || lang::by_name(language).is_some() {
            continue;
        }
        let words = licence_words(r.get_ref(2)?.as_str().unwrap_or_default());
        match path.rsplit_once('/') {
            None => own.push(words),
            Some((folder, _)) => nested.push((format!("{folder}/"), words)),
        }
    }
    if own.is_empty() {
        return Ok(Vec::new());
    }
    let mut folders: Vec<String> = nested
        .into_iter()
        .filter(|(_, words)| !own.iter().any(|o| similar(o, words)))
        .map(|(folder, _)| folder)
        .collect();
    folders.dedup();
    let mut copies = Vec::with_capacity(folders.len());
    for folder in folders {
        if stands_alone(conn, &folder)? {
            copies.push(folder);
        }
    }
    Ok(copies)
}

/// Whether the code under `folder` (ending in `/`) uses nothing outside it: no import,
/// include, call or base resolved with confidence into another folder's file. A vendored
/// library stands alone; code a project took in under its first licence and made its own
/// (Django's `dispatch/`, from PyDispatcher) uses the project.
fn stands_alone(conn: &Connection, folder: &str) -> Result<bool> {
    // Paths under `a/b/` sort between `a/b/` and `a/b0` ('0' follows '/'). CROSS JOIN
    // keeps this order: from the folder's files to their edges, not a scan of every edge.
    let end = format!("{}0", &folder[..folder.len() - 1]);
    let mut q = conn.prepare_cached(&format!(
        "SELECT EXISTS (SELECT 1 FROM files f CROSS JOIN nodes s ON s.file_id = f.id \
         CROSS JOIN edges e ON e.source_id = s.id CROSS JOIN nodes t ON t.id = e.target_id \
         CROSS JOIN files g ON g.id = t.file_id \
         WHERE f.path > ?1 AND f.path < ?2 AND e.kind <> 'contains' \
         AND e.confidence >= {CONFIDENT_USE} AND NOT (g.path > ?1 AND g.path < ?2))"
    ))?;
    let uses_outside: bool = q.query_row([folder, end.as_str()], |r| r.get(0))?;
    Ok(!uses_outside)
}

/// The least confidence of an edge that says one file uses another: imports, includes,
/// members of known types; not a name that merely occurs elsewhere (0.5 and below).
const CONFIDENT_USE: f64 = 0.8;

/// A licence's words, lowercase, without its copyright lines (whose holders and years
/// differ between a project's packages).
fn licence_words(text: &str) -> FxHashSet<String> {
    text.lines()
        .filter(|l| !l.to_ascii_lowercase().contains("copyright"))
        .flat_map(|l| l.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Nine in ten of the distinct words shared: the same licence, reformatted or reworded a
/// little.
fn similar(a: &FxHashSet<String>, b: &FxHashSet<String>) -> bool {
    let shared = a.intersection(b).count();
    let all = a.len() + b.len() - shared;
    all > 0 && shared * 10 >= all * 9
}

/// The folder a path is in (`""` at the top).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// A language and its dialects count as one: a header is C or C++ by guess, a React
/// component TSX beside its TypeScript.
fn family(language: &str) -> &'static str {
    match language {
        "c" | "cpp" => "c",
        "typescript" | "tsx" => "typescript",
        other => lang::by_name(other).map_or("", |l| l.name),
    }
}

/// A definition matching a query: its node, its file (id, path) and its BM25 score, weighted
/// by its file's kind (`FileWeights`).
#[derive(Debug, Clone)]
pub struct DefinitionHit {
    pub node: i64,
    pub file: i64,
    pub path: String,
    pub qualified_name: String,
    pub score: f64,
}

/// What the query says in its own words: `query` without the lines it copies from the
/// repository's issue templates (`without_template_lines`), or all of it when nothing else is
/// left. Everything that ranks for a query (files, the map's and the pack's definitions) reads
/// this.
pub fn own_query(conn: &Connection, query: &str) -> Result<String> {
    let own = without_template_lines(conn, query)?;
    Ok(if has_words(&own) {
        own
    } else {
        query.to_string()
    })
}

/// The query without the lines it copies from the repository's issue templates (files whose
/// path holds `issue_template`, as GitHub's `.github/ISSUE_TEMPLATE/` and its one-file form):
/// a line of at least `TEMPLATE_LINE_WORDS` words that a template holds word for word, case
/// and punctuation aside (`- [X] I'm reporting a broken site` for the template's `label: I'm
/// reporting a broken site`).
fn without_template_lines(conn: &Connection, query: &str) -> Result<String> {
    let mut q = conn.prepare_cached(
        "SELECT c.content FROM files f JOIN file_contents c ON c.file_id = f.id \
         WHERE lower(f.path) LIKE '%issue\\_template%' ESCAPE '\\' ORDER BY f.path",
    )?;
    // Each template's words, space-separated and padded, so a line matches whole words only.
    let mut templates = String::new();
    for content in q.query_map([], |r| r.get::<_, String>(0))? {
        templates.push(' ');
        templates.push_str(&plain(&content?));
        templates.push_str(" \n");
    }
    if templates.is_empty() {
        return Ok(query.to_string());
    }
    let mut own = String::with_capacity(query.len());
    for line in query.lines() {
        // A ticked or unticked box of a Markdown checklist is the reporter's, the text the
        // template's.
        let item = line
            .trim_start()
            .trim_start_matches(['-', '*', '+'])
            .trim_start();
        let item = ["[x]", "[X]", "[ ]"]
            .iter()
            .find_map(|b| item.strip_prefix(b))
            .unwrap_or(line);
        let words = plain(item);
        let copied = words.split(' ').count() >= TEMPLATE_LINE_WORDS
            && templates.contains(&format!(" {words} "));
        if !copied {
            own.push_str(line);
            own.push('\n');
        }
    }
    Ok(own)
}

/// Lowercase alphanumeric runs, one space between them.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for run in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(run.chars().flat_map(char::to_lowercase));
    }
    out
}

/// Whether the query holds any search word (see `words`).
pub fn has_words(query: &str) -> bool {
    let mut any = false;
    words(query, false, |_| any = true);
    any
}

/// The `limit` definitions with the best BM25 for any of the query's words, best first,
/// each with its score weighted by its file's kind (`FileWeights`) and ordered by that.
///
/// The score is FTS5's `bm25()` over `nodes_fts` with the column weights above, read from the
/// definition word index (`store::terms`): FTS5 evaluates it on every row holding any of the
/// words, tens of thousands for an issue text, where the index adds up a few postings lists.
pub fn definition_hits(conn: &Connection, query: &str, limit: usize) -> Result<Vec<DefinitionHit>> {
    weighted_definition_hits(conn, &FileWeights::load(conn)?, query, limit)
}

fn weighted_definition_hits(
    conn: &Connection,
    weights: &FileWeights,
    query: &str,
    limit: usize,
) -> Result<Vec<DefinitionHit>> {
    let mut asked = BTreeSet::new();
    words(query, false, |w| {
        asked.insert(w.to_string());
    });
    let (rows, total_words) = crate::store::terms::definition_collection(conn)?;
    if rows <= 0 || asked.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let rows = rows as f64;
    let mean_length = (total_words as f64 / rows).max(1.0);
    let mut postings =
        conn.prepare_cached("SELECT postings FROM definition_terms WHERE term = ?1")?;
    // Each word's IDF (FTS5's) and postings, in the words' order: summed in one order, equal
    // queries give equal scores to the last bit.
    let mut lists: Vec<(f64, Vec<crate::store::terms::Entry<2>>)> = Vec::new();
    for word in &asked {
        let Some(blob) = postings
            .query_row([word], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        else {
            continue;
        };
        let mut held = Vec::new();
        crate::store::terms::decode(&blob, |node, values| held.push((node, values)));
        let df = held.len() as f64;
        lists.push((((rows - df + 0.5) / (df + 0.5)).ln(), held));
    }
    // A word at least half the definitions hold has no weight (FTS5 floors its IDF at
    // 1e-6): it is left out, but when such words are all there is.
    if lists.iter().any(|(idf, _)| *idf > 0.0) {
        lists.retain(|(idf, _)| *idf > 0.0);
    }
    let mut scores: FxHashMap<i64, f64> = FxHashMap::default();
    for (idf, held) in &lists {
        let idf = idf.max(1e-6);
        for &(node, [weighted, length]) in held {
            let f = f64::from(weighted) / 2.0;
            let norm = FTS_K1 * (1.0 - FTS_B + FTS_B * f64::from(length) / mean_length);
            *scores.entry(node).or_default() += idf * f * (FTS_K1 + 1.0) / (f + norm);
        }
    }
    let mut best: Vec<(i64, f64)> = scores.into_iter().collect();
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if best.len() > limit {
        best.select_nth_unstable_by(limit - 1, order);
        best.truncate(limit);
    }
    let mut row = conn.prepare_cached(
        "SELECT f.id, f.path, f.language, f.flags, n.qualified_name FROM nodes n \
         JOIN files f ON f.id = n.file_id WHERE n.id = ?1",
    )?;
    let mut hits = Vec::with_capacity(best.len());
    for (node, score) in best {
        let found = row
            .query_row([node], |r| Ok((weights.file(r)?, r.get::<_, String>(4)?)))
            .optional()?;
        if let Some(((file, path, w), qualified_name)) = found {
            hits.push(DefinitionHit {
                node,
                file,
                path,
                qualified_name,
                score: score * w,
            });
        }
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    Ok(hits)
}

/// Files (id, path) by their best definition's weighted BM25 for the query, secondary files
/// discounted, with that definition's qualified name.
fn by_best_definition(hits: &[DefinitionHit]) -> Vec<(i64, String, String)> {
    // file -> (score, path, qualified name)
    let mut best: HashMap<i64, (f64, &str, &str)> = HashMap::new();
    for hit in hits {
        let entry = best.entry(hit.file).or_insert((f64::MIN, &hit.path, ""));
        // Ties go to the first qualified name, whatever order SQLite returns rows in.
        if hit.score > entry.0 || (hit.score == entry.0 && hit.qualified_name.as_str() < entry.2) {
            entry.0 = hit.score;
            entry.2 = &hit.qualified_name;
        }
    }
    let mut files: Vec<(i64, (f64, &str, &str))> = best.into_iter().collect();
    files.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.1 .2.cmp(b.1 .2)));
    files
        .into_iter()
        .map(|(file, (_, path, symbol))| (file, path.to_string(), symbol.to_string()))
        .collect()
}

/// The `limit` text files (id, path) with the best Okapi BM25 over their whole text (path
/// included) for the query's words, each counted as often as the query repeats it, weighted
/// as in `FileWeights`. The IDF is Lucene's, `ln(1 + (N -
/// df + 0.5) / (df + 0.5))`, which stays positive for words most files hold.
///
/// N, df and the mean length are those of the code files (of every file when there are
/// none): documentation, data and configuration are scored, but their words do not reshape
/// how code files score against each other (measured: counting them moved code files up and
/// down at random, Acc@1 41.1 to 40.4% over the three mirrored sets).
fn by_file_text(
    conn: &Connection,
    weights: &FileWeights,
    query: &str,
    limit: usize,
) -> Result<Vec<(i64, String)>> {
    let mut asked: HashMap<String, u32> = HashMap::new();
    words(query, false, |w| {
        *asked.entry(w.to_string()).or_default() += 1
    });
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    // file -> (its length in words, whether it is code)
    let mut files: HashMap<i64, (f64, bool)> = HashMap::new();
    let mut q = conn.prepare_cached(
        "SELECT w.file_id, w.words, f.language FROM file_words w JOIN files f ON f.id = w.file_id",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let language = r.get_ref(2)?.as_str().unwrap_or_default();
        let is_code = lang::by_name(language).is_some();
        files.insert(r.get(0)?, (r.get(1)?, is_code));
    }
    let any_code = files.values().any(|(_, is_code)| *is_code);
    let counted = |is_code: bool| is_code || !any_code;
    let (n, total) = files
        .values()
        .filter(|(_, is_code)| counted(*is_code))
        .fold((0usize, 0.0), |(n, t), (words, _)| (n + 1, t + words));
    if n == 0 {
        return Ok(Vec::new());
    }
    let mean_words = (total / n as f64).max(1.0);
    let norm = |words: f64| BM25_K1 * (1.0 - BM25_B + BM25_B * words / mean_words);
    let mut postings = conn.prepare_cached("SELECT postings FROM file_terms WHERE term = ?1")?;
    let mut scores: HashMap<i64, f64> = HashMap::new();
    let mut asked: Vec<(String, u32)> = asked.into_iter().collect();
    // Summed in one order, so equal queries give equal scores to the last bit.
    asked.sort_unstable();
    let mut held = Vec::new();
    for (word, times) in &asked {
        let Some(blob) = postings
            .query_row([word], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        else {
            continue;
        };
        held.clear();
        crate::store::terms::decode(&blob, |file, [tf]| held.push((file, f64::from(tf))));
        let df = held
            .iter()
            .filter(|(file, _)| files.get(file).is_some_and(|f| counted(f.1)))
            .count() as f64;
        let idf = (1.0 + (n as f64 - df + 0.5) / (df + 0.5)).ln();
        let weight = idf * (BM25_K1 + 1.0) * f64::from(*times);
        for &(file, tf) in &held {
            let length = files.get(&file).map_or(mean_words, |f| f.0);
            *scores.entry(file).or_default() += weight * tf / (tf + norm(length));
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
        if let Some((id, path, w)) = file.query_row([id], |r| weights.file(r)).optional()? {
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

/// The file of the innermost frame of a stack trace the query quotes that is the
/// repository's own code, as (id, path): where the failure surfaced, which is often where it
/// is fixed. A frame is a path the index holds followed by its line (`src/jv.c:757`,
/// `File "django/db/models/query.py", line 12`, `(lib/utils.js:10:5)`); a path is taken as
/// written, from its longest tail the index holds (an absolute path from the reporter's
/// machine ends in the repository's). Python prints the innermost frame last, C, Go, Rust,
/// Java and JavaScript first. Frames in tests, vendored copies and other secondary code are
/// skipped; fewer than two frames in code files are a mention, not a trace.
fn crash_site(
    conn: &Connection,
    weights: &FileWeights,
    query: &str,
) -> Result<Option<(i64, String)>> {
    static FRAME: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let frame = FRAME.get_or_init(|| {
        regex::Regex::new(r#"([\w./\\-]*[\w-]+\.[A-Za-z]{1,5})(", line |:)\d+"#)
            .expect("frame pattern")
    });
    let mut file =
        conn.prepare_cached("SELECT id, path, language, flags FROM files WHERE path = ?1")?;
    let (mut frames, mut python) = (0, false);
    let mut own: Vec<(i64, String)> = Vec::new();
    for m in frame.captures_iter(query).take(MAX_FRAMES) {
        let written = m[1].replace('\\', "/");
        let mut tail = written.as_str();
        let found = loop {
            let found = file
                .query_row([tail], |r| {
                    let code = lang::by_name(r.get_ref(2)?.as_str().unwrap_or_default());
                    Ok((weights.file(r)?, code.is_some()))
                })
                .optional()?;
            match (found, tail.split_once('/')) {
                (Some(f), _) => break Some(f),
                (None, Some((_, rest))) if !rest.is_empty() => tail = rest,
                (None, _) => break None,
            }
        };
        let Some(((id, path, w), true)) = found else {
            continue;
        };
        frames += 1;
        python |= &m[2] == "\", line ";
        if w == 1.0 {
            own.push((id, path));
        }
    }
    if frames < 2 {
        return Ok(None);
    }
    Ok(if python {
        own.pop()
    } else {
        own.into_iter().next()
    })
}

/// Files the query names as code, most clearly named first: paths (`db/models/query.py`),
/// and definitions whose name is written as an identifier (`QuerySet.update`,
/// `get_user_model`, `ForeignKey`); a name defined in many files names none of them.
fn named_files(
    conn: &Connection,
    weights: &FileWeights,
    query: &str,
) -> Result<Vec<(i64, String)>> {
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
            for row in by_path.query_map([token, suffix.as_str()], |r| weights.file(r))? {
                let (file, path, w) = row?;
                named.entry(file).or_insert((0.0, path)).0 += 2.0 * w;
            }
            continue;
        }
        for part in token.split('.').filter(|p| looks_like_identifier(p)) {
            let files = by_name
                .query_map([part], |r| weights.file(r))?
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

    /// Ten functions whose signatures all hold `amount`, one that also holds `refund`.
    fn ledger() -> (tempfile::TempDir, Connection) {
        let mut code: String = (0..10)
            .map(|i| format!("def entry_{i}(amount):\n    return amount + {i}\n\n"))
            .collect();
        code.push_str("def refund_amount(amount, refund):\n    return amount - refund\n");
        index::test_fixture(&[("ledger.py", &code)])
    }

    #[test]
    fn definition_hits_score_as_the_full_text_index_does() {
        let files: &[(&str, &str)] = &[
            (
                "billing/refund.py",
                "class Refund:\n    \"\"\"A refund of a charged invoice.\"\"\"\n\n    \
                 def apply(self, invoice, amount):\n        \"\"\"Credits the invoice.\"\"\"\n\
                 \n\ndef refund_invoice(invoice):\n    return Refund().apply(invoice, 0)\n",
            ),
            (
                "billing/invoice.go",
                "package billing\n\n// Invoice is a bill sent to a customer.\ntype Invoice struct{}\n\n\
                 // Total sums the invoice lines with tax.\nfunc (i *Invoice) Total(tax float64) float64 { return tax }\n",
            ),
            (
                "web/charge.js",
                "/** Charges a card for an invoice. */\nexport function chargeCard(card, invoice) {}\n\
                 export class Checkout {\n  /** Refund the last charge. */\n  refundLast() {}\n}\n",
            ),
            (
                "src/tax.rs",
                "/// The tax due on an invoice total.\npub fn tax_due(total: f64) -> f64 { total }\n\
                 pub struct TaxTable;\n",
            ),
        ];
        let (_dir, conn) = index::test_fixture(files);
        // Words fewer than half the definitions hold, scored exactly as FTS5 scores them.
        for query in [
            "refund",
            "refund charge café",
            "chargeCard fails for a card",
            "tax_due with TaxTable and Total",
        ] {
            let mut fts_words = BTreeSet::new();
            words(query, false, |w| {
                fts_words.insert(format!("\"{w}\""));
            });
            let fts_query = fts_words.into_iter().collect::<Vec<_>>().join(" OR ");
            let mut q = conn
                .prepare(
                    "SELECT n.qualified_name, -bm25(nodes_fts, 10.0, 4.0, 6.0, 1.0, 0.5) \
                     FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid \
                     WHERE nodes_fts MATCH ?1",
                )
                .unwrap();
            let mut fts: Vec<(String, f64)> = q
                .query_map([&fts_query], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            fts.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let mut ours: Vec<(String, f64)> = definition_hits(&conn, query, 100)
                .unwrap()
                .into_iter()
                .map(|h| (h.qualified_name, h.score))
                .collect();
            ours.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            assert_eq!(ours.len(), fts.len(), "{query}");
            assert!(!ours.is_empty(), "{query}");
            for ((name, score), (fts_name, fts_score)) in ours.iter().zip(&fts) {
                assert_eq!(name, fts_name, "{query}");
                assert!(
                    (score - fts_score).abs() < 1e-9 * fts_score.abs().max(1.0),
                    "{query}"
                );
            }
        }
        let (_dir, conn) = ledger();
        let names = |q: &str| -> Vec<String> {
            definition_hits(&conn, q, 20)
                .unwrap()
                .into_iter()
                .map(|h| h.qualified_name)
                .collect()
        };
        // `amount` is in 11 of the 12 rows (the file node lacks it): it weighs nothing and
        // is left out, but when it is all there is.
        assert_eq!(names("amount refund"), names("refund"));
        assert_eq!(names("refund"), ["ledger.refund_amount"]);
        assert_eq!(names("amount").len(), 11);
        assert!(names("nowhere").is_empty());
    }

    /// A repository where the words an issue quotes are only in function bodies (a message,
    /// a flag), one file per language, each beside a file whose definitions or text hold
    /// one of the same words.
    #[test]
    fn files_whose_text_holds_the_issue_words_rank_first_in_every_language() {
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
            // Not code: found by its text all the same, below code that says as much.
            ("requirements.txt", "onnxruntime-gpu==1.16.3\nopencv-python==4.8.0.74\n"),
            (
                "docs/faq.md",
                "Resizing the window redraws the canvas; a lost context is restored.\n",
            ),
        ];
        let (_dir, conn) = index::test_fixture(files);
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
            (
                "pin onnxruntime-gpu below 1.17, 1.17.0 breaks the CUDA provider",
                "requirements.txt",
            ),
        ] {
            let ranked = rank_files(&conn, issue, 3).unwrap();
            assert_eq!(ranked[0].path, wanted, "{issue}: {ranked:?}");
        }
        let canvas = rank_files(&conn, "canvas context lost during resize", 10).unwrap();
        let at = |path: &str| canvas.iter().position(|f| f.path == path);
        assert!(at("docs/faq.md") > at("web/render.js"), "{canvas:?}");
        assert!(at("docs/faq.md").is_some(), "{canvas:?}");
        // The word index holds every text file.
        let terms: i64 = conn
            .query_row("SELECT count(*) FROM file_words", [], |r| r.get(0))
            .unwrap();
        assert_eq!(terms, files.len() as i64);
    }

    /// A bundle built from the sources matches a query as its source does: the second of the
    /// two follows the other files instead of taking the second place, and says what it copies.
    #[test]
    fn a_copy_follows_the_other_files() {
        let body = "  const delay = config.backoff * Math.pow(2, attempt);\n\
                    \x20 if (attempt >= config.maxRetries) { throw new RetryError(config.url, attempt); }\n\
                    \x20 return sleep(delay).then(() => send(config, attempt + 1));\n\
                    \x20 // jitter keeps clients from retrying in step; headers and cookies stay as sent\n\
                    \x20 const jitter = random() * delay / 4; log(config.verbose, 'retry', jitter);\n";
        let source = format!("export function retryRequest(config, attempt) {{\n{body}}}\n");
        let bundle = format!(
            "(function (global) {{\n'use strict';\nfunction retryRequest(config, attempt) {{\n{body}}}\nglobal.retryRequest = retryRequest;\n}})(this);\n"
        );
        let files = [
            ("src/retry.js", source.as_str()),
            ("dist/bundle.js", bundle.as_str()),
            (
                "src/timeout.js",
                "export function timeoutError(config) {\n  return new Error(`request timed out after ${config.timeout} ms, no retry`);\n}\n",
            ),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        let ranked = rank_files(
            &conn,
            "retryRequest backoff: retry the request after a timeout",
            5,
        )
        .unwrap();
        // Whichever of the two comes first, the other is after the timeout's file.
        let paths: Vec<&str> = ranked.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths.len(), 3, "{ranked:?}");
        assert_eq!(paths[1], "src/timeout.js", "{ranked:?}");
        let mut copies = [paths[0], paths[2]];
        copies.sort_unstable();
        assert_eq!(copies, ["dist/bundle.js", "src/retry.js"]);
        assert_eq!(ranked[2].copy_of.as_deref(), Some(paths[0]));
        assert_eq!(
            (ranked[0].copy_of.as_ref(), ranked[1].copy_of.as_ref()),
            (None, None)
        );
        assert!(
            ranked.windows(2).all(|w| w[0].score >= w[1].score),
            "{ranked:?}"
        );
    }

    #[test]
    fn files_are_copies_when_most_of_their_tokens_are_shared() {
        let words = |n: usize, from: usize| -> String {
            (from..from + n).map(|i| format!("word{i} ")).collect()
        };
        let (a, b, c) = (words(40, 0), words(40, 5), words(40, 30));
        assert_eq!(distinct_tokens("a_b, c9 a_b").len(), 2);
        let (ta, tb, tc) = (
            distinct_tokens(&a),
            distinct_tokens(&b),
            distinct_tokens(&c),
        );
        // 35 shared of 45: a copy; 10 shared of 70: not one.
        assert!(is_copy(&ta, &tb));
        assert!(!is_copy(&ta, &tc));
        // Too little text to tell.
        let short = words(10, 0);
        assert!(!is_copy(&distinct_tokens(&short), &distinct_tokens(&short)));
    }

    /// Type declarations beside JavaScript sources, a Python helper script in a C++ library:
    /// the code of a language the repository barely uses ranks below the sources that say as
    /// much. C headers in a C++ tree, TSX beside TypeScript, are the same language.
    #[test]
    fn code_in_a_minor_language_counts_less() {
        let mut files: Vec<(String, String)> = (0..7)
            .map(|i| {
                (
                    format!("src/plugin/p{i}.js"),
                    format!("export function plugin{i}(o) {{ return o.offset + {i} }}\n"),
                )
            })
            .collect();
        files.push((
            "src/plugin/duration.js".into(),
            "export function duration(ms) {\n  return { milliseconds: ms, humanize() { return ms } }\n}\n".into(),
        ));
        files.push((
            "types/plugin/duration.d.ts".into(),
            "/** humanize() ignores milliseconds under a second. */\nexport declare function duration(ms: number): { milliseconds: number; humanize(): number }\n".into(),
        ));
        let (_dir, conn) = index::test_fixture(&files);
        let weights = FileWeights::load(&conn).unwrap();
        assert_eq!(weights.minor, ["typescript"]);
        let ranked = rank_files(&conn, "duration humanize ignores milliseconds", 5).unwrap();
        let at = |path: &str| ranked.iter().position(|f| f.path == path);
        assert_eq!(at("src/plugin/duration.js"), Some(0), "{ranked:?}");
        assert!(at("types/plugin/duration.d.ts") > Some(0), "{ranked:?}");

        let mut files: Vec<(String, String)> = (0..5)
            .map(|i| {
                (
                    format!("src/unit{i}.cpp"),
                    format!("int unit{i}() {{ return {i}; }}\n"),
                )
            })
            .collect();
        files.push((
            "include/lib/format.h".into(),
            "int format_width(int w);\n".into(),
        ));
        files.push((
            "src/format.cpp".into(),
            "int format_width(int w) { return w; }\n".into(),
        ));
        files.push((
            "scripts/bump_version.py".into(),
            "def format_width(w):\n    # truncates the width of the version banner\n    return w\n"
                .into(),
        ));
        let (_dir, conn) = index::test_fixture(&files);
        let weights = FileWeights::load(&conn).unwrap();
        assert_eq!(weights.minor, ["python"]);
        assert_eq!(weights.of("src/format.cpp", "c", 0), 1.0);
        // The script holds more of the words; the library's source is still first.
        let ranked = rank_files(&conn, "format_width truncates the width", 5).unwrap();
        assert_eq!(ranked[0].path, "src/format.cpp", "{ranked:?}");
    }

    /// A directory's name says nothing of its files' kind: Django's migration framework
    /// (`db/migrations/`) is code like any other.
    #[test]
    fn code_under_any_directory_name_counts_in_full() {
        let (_dir, conn) = index::test_fixture(&[
            (
                "app/db/migrations/serializer.py",
                "class EnumSerializer:\n    def serialize(self):\n        return self.value.name\n",
            ),
            (
                "app/db/models/enums.py",
                "class Enum:\n    def value(self):\n        pass\n\n    def name(self):\n        pass\n",
            ),
            ("app/db/models/fields.py", "class Field:\n    def deconstruct(self):\n        pass\n"),
        ]);
        let ranked = rank_files(&conn, "enum serializer writes the value not the name", 3).unwrap();
        assert_eq!(
            ranked[0].path, "app/db/migrations/serializer.py",
            "{ranked:?}"
        );
    }

    /// An issue filed through the repository's template repeats the template's checklist;
    /// the code that writes the template holds those words too, and only the reporter's own
    /// lines say where the bug is.
    #[test]
    fn lines_copied_from_the_issue_template_are_not_the_query() {
        let checklist = [
            "I'm reporting that the extractor of a site is broken",
            "I've verified that I'm running the latest version of the extractor",
            "I've checked that all provided URLs are playable in a browser",
            "I've searched the bugtracker for similar issues including closed ones",
            "I've read the guidelines for opening an issue about an extractor",
        ];
        let template: String = checklist
            .iter()
            .map(|c| format!("  - label: {c}\n    required: true\n"))
            .collect();
        // Named after the lines it writes, as such generators' functions are.
        let generator: String = checklist
            .iter()
            .map(|c| {
                let name: Vec<String> = c
                    .split(|ch: char| !ch.is_alphanumeric())
                    .filter(|w| w.len() > 2)
                    .map(str::to_lowercase)
                    .collect();
                format!("def {}():\n    return \"{c}\"\n\n", name.join("_"))
            })
            .collect();
        let (_dir, conn) = index::test_fixture(&[
            (
                ".github/ISSUE_TEMPLATE/1_broken_site.yml",
                format!("body:\n{template}").as_str(),
            ),
            ("devscripts/make_issue_template.py", generator.as_str()),
            (
                "tool/extractor/tiktok.py",
                "def extract_video(url):\n    raise ValueError('unable to extract webpage video data')\n",
            ),
            ("tool/extractor/common.py", "def extract_info(url):\n    return url\n"),
        ]);
        let mut issue = String::from("[TikTok] Unable to extract webpage video data\n\n");
        for c in checklist {
            issue.push_str(&format!("- [X] {c}\n"));
        }
        let issue = issue.as_str();
        let own = without_template_lines(&conn, issue).unwrap();
        assert_eq!(own, "[TikTok] Unable to extract webpage video data\n\n");
        let ranked = rank_files(&conn, issue, 3).unwrap();
        assert_eq!(ranked[0].path, "tool/extractor/tiktok.py", "{ranked:?}");
        // Without a template nothing is left out.
        let (_dir, conn) = index::test_fixture(&[("a.py", "def a():\n    pass\n")]);
        assert_eq!(without_template_lines(&conn, issue).unwrap(), issue);
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

    /// Two copies of one DNS resolver: the old one in a package whose comment declares it
    /// deprecated (in another file of the package, as Go puts it in `doc.go`), the new one
    /// with fewer of the query's words.
    #[test]
    fn a_deprecated_go_package_ranks_after_its_replacement() {
        let resolver = |package: &str, extra: &str| {
            format!(
                "package {package}\n\n// dnsResolver resolves names by DNS lookups{extra}.\n\
                 type dnsResolver struct{{}}\n\n// Resolve starts a DNS lookup of target{extra}.\n\
                 func (d *dnsResolver) Resolve(target string) {{}}\n"
            )
        };
        let files = [
            (
                "naming/doc.go",
                "// Package naming resolves names.\n//\n// Deprecated: please use package \
                 resolver.\npackage naming\n"
                    .to_string(),
            ),
            (
                "naming/dns_resolver.go",
                resolver("naming", " with a rate limit"),
            ),
            ("resolver/dns/dns_resolver.go", resolver("dns", "")),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        let flagged: Vec<String> = conn
            .prepare("SELECT path FROM files WHERE flags & 16 <> 0")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(flagged, ["naming/doc.go"]);
        let ranked = rank_files(&conn, "rate limit the DNS resolver lookups", 5).unwrap();
        let paths: Vec<&str> = ranked.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths[..2],
            ["resolver/dns/dns_resolver.go", "naming/dns_resolver.go"]
        );
    }

    /// A Java type marked `@Deprecated` makes its file deprecated; one deprecated method does
    /// not.
    #[test]
    fn a_deprecated_java_type_marks_its_file() {
        let files = [
            (
                "src/OldParser.java",
                "package p;\n\n@Deprecated\npublic class OldParser {\n    \
                 /** Parses a date string in any time zone. */\n    \
                 public Date parse(String text) { return null; }\n}\n",
            ),
            (
                "src/DateParser.java",
                "package p;\n\npublic class DateParser {\n    \
                 /** Parses a date string. */\n    @Deprecated\n    \
                 public Date parse(String text) { return null; }\n}\n",
            ),
            (
                "src/Sums.java",
                "package p;\n\npublic class Sums {\n    \
                 public int add(int a, int b) { return a + b; }\n}\n",
            ),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        let flags = |path: &str| -> i64 {
            conn.query_row("SELECT flags FROM files WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .unwrap()
        };
        assert_eq!(
            flags("src/OldParser.java") & FLAG_DEPRECATED,
            FLAG_DEPRECATED
        );
        assert_eq!(flags("src/DateParser.java") & FLAG_DEPRECATED, 0);
        // The deprecated parser holds more of the words; its replacement is still first.
        let ranked = rank_files(&conn, "parsing a date string in a time zone fails", 5).unwrap();
        let paths: Vec<&str> = ranked.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths[..2],
            ["src/DateParser.java", "src/OldParser.java"],
            "{ranked:?}"
        );
    }

    const MIT: &str = "Permission is hereby granted, free of charge, to any person obtaining a \
        copy of this software and associated documentation files (the Software), to deal in \
        the Software without restriction, including without limitation the rights to use, \
        copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the \
        Software.\nTHE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND.\n";

    /// A folder whose licence is another project's is a copy of that project; a workspace
    /// member repeating the repository's licence under its own copyright line is not.
    #[test]
    fn a_vendored_library_ranks_after_the_projects_own_code() {
        let number = |extra: &str| {
            format!(
                "/* Compares two decimal numbers{extra}. */\nint number_compare(int a, int b) \
                 {{ return a - b; }}\n"
            )
        };
        let files = [
            (
                "COPYING".to_string(),
                format!("Copyright (C) 2012 A. Author\n\n{MIT}"),
            ),
            (
                "src/decimal/ICU-license.html".to_string(),
                "<p>ICU License</p><p>COPYRIGHT AND PERMISSION NOTICE. Permission to use, \
                 copy and distribute this software is granted provided that the above \
                 notice(s) appear in all copies and in supporting documentation.</p>"
                    .to_string(),
            ),
            (
                "src/decimal/number.c".to_string(),
                number(" with overflow checks and rounding"),
            ),
            (
                "tools/LICENSE".to_string(),
                format!("Copyright (c) 2019 The Tools Authors\n\n{MIT}"),
            ),
            (
                "tools/compare.c".to_string(),
                number(" for the command line"),
            ),
            ("src/value.c".to_string(), number(" with overflow checks")),
            (
                "src/io.c".to_string(),
                "/* Writes a buffer to a stream. */\nint write_all(int fd) { return fd; }\n"
                    .to_string(),
            ),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        assert_eq!(third_party_folders(&conn).unwrap(), ["src/decimal/"]);
        // The vendored copy holds more of the words; the project's own code is still first.
        let ranked = rank_files(
            &conn,
            "compare decimal numbers: overflow checks and rounding",
            5,
        )
        .unwrap();
        assert_eq!(ranked[0].path, "src/value.c", "{ranked:?}");
        let vendored = ranked.iter().position(|f| f.path == "src/decimal/number.c");
        assert!(vendored.is_some_and(|i| i > 0), "{ranked:?}");
    }

    /// Code taken in under its first licence and made the project's own uses the project:
    /// it is not a copy of another project. A folder under another licence whose code uses
    /// nothing outside it is.
    #[test]
    fn code_under_another_licence_that_uses_the_project_is_its_own() {
        let bsd = "Redistribution and use in source and binary forms, with or without \
                   modification, are permitted provided that the conditions are met. Neither \
                   the name of PyDispatcher nor the names of its contributors may be used to \
                   endorse or promote products derived from this software.\n";
        let files = [
            ("LICENSE", MIT.to_string()),
            ("app/dispatch/license.txt", bsd.to_string()),
            (
                "app/dispatch/dispatcher.py",
                "from app.utils import make_id\n\n\nclass Signal:\n    \
                 def connect(self, receiver):\n        return make_id(receiver)\n"
                    .to_string(),
            ),
            (
                "app/utils.py",
                "def make_id(target):\n    return id(target)\n".to_string(),
            ),
            ("lib/vendored/license.txt", bsd.to_string()),
            (
                "lib/vendored/signals.py",
                "class Signal:\n    def connect(self, receiver):\n        return receiver\n"
                    .to_string(),
            ),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        assert_eq!(third_party_folders(&conn).unwrap(), ["lib/vendored/"]);
    }

    /// A stack trace's innermost frame in the repository's own code: the last one in
    /// Python's tracebacks, the first in a C sanitizer's; tests and one-off mentions are not
    /// crash sites.
    #[test]
    fn the_crash_site_is_the_innermost_frame_of_the_projects_own_code() {
        let files = [
            (
                "app/views.py",
                "def render_page(request):\n    return fetch_rows()\n",
            ),
            (
                "app/db/query.py",
                "def fetch_rows():\n    raise ValueError('no rows')\n",
            ),
            (
                "tests/test_views.py",
                "def test_page():\n    render_page(None)\n",
            ),
            ("src/jv.c", "int jv_cmp(int a, int b) { return a - b; }\n"),
            ("src/main.c", "int main(void) { return jv_cmp(1, 2); }\n"),
        ];
        let (_dir, conn) = index::test_fixture(&files);
        let weights = FileWeights::load(&conn).unwrap();
        let site = |query: &str| {
            crash_site(&conn, &weights, query)
                .unwrap()
                .map(|(_, path)| path)
        };
        let python = "Traceback (most recent call last):\n  \
            File \"/home/me/proj/tests/test_views.py\", line 2, in test_page\n  \
            File \"/home/me/proj/app/views.py\", line 2, in render_page\n  \
            File \"/home/me/proj/app/db/query.py\", line 2, in fetch_rows\n\
            ValueError: no rows\n";
        assert_eq!(site(python).as_deref(), Some("app/db/query.py"));
        let sanitizer = "AddressSanitizer: SEGV\n    #0 0x55 in jv_cmp src/jv.c:1\n    \
            #1 0x56 in main src/main.c:1\n";
        assert_eq!(site(sanitizer).as_deref(), Some("src/jv.c"));
        // A test's frame is skipped; one frame is a mention, not a trace.
        let from_a_test = "at tests/test_views.py:2\nat app/views.py:2\n";
        assert_eq!(site(from_a_test).as_deref(), Some("app/views.py"));
        assert_eq!(site("see src/main.c:1 for the call"), None);
        // The site joins the ranking: the C trace puts src/jv.c first.
        let ranked = rank_files(&conn, sanitizer, 5).unwrap();
        assert_eq!(ranked[0].path, "src/jv.c", "{ranked:?}");
    }
}
