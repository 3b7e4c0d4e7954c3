//! Small text utilities shared by the stages.

/// Splits an identifier into lowercase sub-tokens for search:
/// `parseHTTPRequest` -> `parse http request`, `get_user` -> `get user`, `Vec2D` -> `vec2 d`.
pub fn split_identifier(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 8);
    let mut buf = String::new();
    sub_tokens(
        ident,
        |c| !c.is_alphanumeric(),
        &mut buf,
        |t| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(t);
        },
    );
    out
}

/// Calls `emit` with each lowercase sub-token of `text` in order (see `split_identifier`),
/// built in `buf`: nothing is allocated once `buf` holds the longest. Characters for which
/// `separates` holds are dropped and end a sub-token; it must hold for every character that
/// is not a letter or digit.
fn sub_tokens(
    text: &str,
    separates: impl Fn(char) -> bool,
    buf: &mut String,
    mut emit: impl FnMut(&str),
) {
    buf.clear();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if separates(c) {
            if !buf.is_empty() {
                emit(buf);
                buf.clear();
            }
            prev = Some(c);
            continue;
        }
        let boundary = !buf.is_empty()
            && c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase()))
            });
        if boundary {
            emit(buf);
            buf.clear();
        }
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else if c.is_lowercase() {
            // Its own lowercase form (checked over every character by a test): no table
            // lookup.
            buf.push(c);
        } else {
            buf.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !buf.is_empty() {
        emit(buf);
        buf.clear();
    }
}

/// `sub_tokens` of an ASCII identifier (letters, digits and underscores). A sub-token
/// without capitals is emitted as a slice of `ident`; only one with capitals is lowercased
/// into `buf`.
fn ascii_sub_tokens(ident: &str, buf: &mut String, mut emit: impl FnMut(&str)) {
    let bytes = ident.as_bytes();
    let mut part = |start: usize, end: usize| {
        if start < end {
            let token = &ident[start..end];
            if token.bytes().any(|b| b.is_ascii_uppercase()) {
                buf.clear();
                buf.push_str(token);
                buf.make_ascii_lowercase();
                emit(buf);
            } else {
                emit(token);
            }
        }
    };
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            part(start, i);
            start = i + 1;
            continue;
        }
        let boundary = i > start
            && b.is_ascii_uppercase()
            && match bytes[i - 1] {
                p if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                p if p.is_ascii_uppercase() => {
                    bytes.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                }
                _ => false,
            };
        if boundary {
            part(start, i);
            start = i;
        }
    }
    part(start, bytes.len());
}

/// Calls `each` with every maximal run of letters and digits in `text` (and underscores,
/// when `underscores` is set), and whether the run is ASCII. ASCII bytes are classified
/// as bytes; only other characters are decoded.
fn runs<'t>(text: &'t str, underscores: bool, mut each: impl FnMut(&'t str, bool)) {
    let bytes = text.as_bytes();
    // Text in one language repeats a few dozen letters: each one's class is looked up in
    // Unicode's tables once, then found here (an ASCII key marks an empty slot).
    let mut classes = [('\0', false); 64];
    let mut start = 0;
    let mut ascii = true;
    let mut i = 0;
    while i < bytes.len() {
        let (in_word, width) = match BYTE_CLASS[usize::from(bytes[i])] {
            WORD => (true, 1),
            SEPARATOR => (false, 1),
            UNDERSCORE => (underscores, 1),
            _ => {
                // `i` is at a character's first byte: runs end only on whole characters.
                let c = text[i..]
                    .chars()
                    .next()
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
                let slot = &mut classes[c as usize % classes.len()];
                if slot.0 != c {
                    *slot = (c, c.is_alphanumeric());
                }
                (slot.1, c.len_utf8())
            }
        };
        if in_word {
            ascii &= width == 1;
        } else {
            if start < i {
                each(&text[start..i], ascii);
            }
            start = i + width;
            ascii = true;
        }
        i += width;
    }
    if start < bytes.len() {
        each(&text[start..], ascii);
    }
}

/// `runs`' classes of a byte: an ASCII letter or digit, the underscore, any other ASCII
/// character, and the first byte of a non-ASCII character.
const WORD: u8 = 0;
const UNDERSCORE: u8 = 1;
const SEPARATOR: u8 = 2;
const NON_ASCII: u8 = 3;
const BYTE_CLASS: [u8; 256] = {
    let mut class = [NON_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        class[b] = match b as u8 {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => WORD,
            b'_' => UNDERSCORE,
            _ => SEPARATOR,
        };
        b += 1;
    }
    class
};

/// Words that carry no meaning for code search.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "but", "by", "can", "cannot", "could", "did", "do", "does", "don", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "if", "in", "into", "is", "it", "its",
    "just", "me", "my", "no", "not", "of", "on", "only", "or", "our", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "too", "very", "was", "we", "were", "what", "when", "where", "which",
    "who", "why", "will", "with", "would", "you", "your",
];

/// Calls `emit` with every search word of `text`: identifiers and words split into lowercase
/// sub-tokens (`getUserName` gives `get`, `user`, `name`), stopwords and one-letter words
/// left out. A compound identifier is also emitted whole (`getusername`, `get_user_name`)
/// when `whole` is set.
pub fn words(text: &str, whole: bool, mut emit: impl FnMut(&str)) {
    let mut buf = String::new();
    runs(text, true, |raw, ascii| {
        let mut parts = 0;
        run_words(raw, ascii, &mut buf, |part| {
            emit(part);
            parts += 1;
        });
        if whole && parts > 1 {
            let lower = raw.to_lowercase();
            if keep(&lower) {
                emit(&lower);
            }
        }
    });
}

/// The search words of one run of letters, digits and underscores (see `runs`).
fn run_words(raw: &str, ascii: bool, buf: &mut String, mut emit: impl FnMut(&str)) {
    let mut part = |part: &str| {
        if keep(part) {
            emit(part);
        }
    };
    if ascii {
        ascii_sub_tokens(raw, buf, &mut part);
    } else {
        // A run holds letters, digits and underscores only.
        sub_tokens(raw, |c| c == '_', buf, &mut part);
    }
}

/// `STOPWORDS` as integers (see `packed`), in the same order: a lookup compares integers.
const STOPWORD_KEYS: [u64; STOPWORDS.len()] = {
    let mut keys = [0; STOPWORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = packed(STOPWORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// A word of at most eight bytes as a big-endian integer padded with zero bytes: integers
/// order as the words do (words hold no zero byte).
const fn packed(word: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < 8 {
        key <<= 8;
        if i < word.len() {
            key |= word[i] as u64;
        }
        i += 1;
    }
    key
}

/// For each lowercase ASCII letter, the range of `STOPWORD_KEYS` starting with it: a word
/// is compared with its first letter's few stopwords only.
const STOPWORDS_BY_LETTER: [(usize, usize); 26] = {
    let mut ranges = [(0, 0); 26];
    let mut i = 0;
    while i < STOPWORDS.len() {
        let letter = (STOPWORDS[i].as_bytes()[0] - b'a') as usize;
        if ranges[letter].1 == 0 {
            ranges[letter].0 = i;
        }
        ranges[letter].1 = i + 1;
        i += 1;
    }
    ranges
};

/// Whether `word` (lowercase) is a search word: not a stopword, not a single character.
fn keep(word: &str) -> bool {
    let bytes = word.as_bytes();
    match bytes.len() {
        0 | 1 => false,
        // Every stopword is at most eight bytes long.
        9.. => true,
        _ => {
            if !bytes[0].is_ascii_lowercase() {
                // Stopwords are lowercase ASCII; two to eight bytes may still be one character.
                return word.chars().nth(1).is_some();
            }
            let (start, end) = STOPWORDS_BY_LETTER[usize::from(bytes[0] - b'a')];
            !STOPWORD_KEYS[start..end].contains(&packed(bytes))
        }
    }
}

/// A whole file's search words for the full-text file index: its path's and its text's
/// (`words` without compounds), each with its count, and how many there are in all. The
/// words come in no particular order (the same for the same file): the index keeps each
/// word's files in file order whatever the order of a file's words, and sorting them cost
/// an eighth of the time spent here.
pub fn file_words(path: &str, content: &str) -> (u32, Vec<(String, u32)>) {
    let mut counts = WordCounts::default();
    counts.add(path);
    counts.add(content);
    let WordCounts {
        ids, counts, total, ..
    } = counts;
    let words = ids
        .into_iter()
        .map(|(word, id)| (word, counts[id as usize]))
        .collect();
    (total, words)
}

/// Counts the words of texts as `words` without compounds finds them. A file repeats its
/// identifiers: each distinct run of letters, digits and underscores is split into words
/// once, and where it comes again the words it gave are counted again.
#[derive(Default)]
struct WordCounts<'a> {
    /// Each run seen, and where its words' ids are in `split`.
    runs: rustc_hash::FxHashMap<&'a str, (u32, u32)>,
    split: Vec<u32>,
    /// Each word's id, and the count of each id.
    ids: rustc_hash::FxHashMap<String, u32>,
    counts: Vec<u32>,
    total: u32,
    buf: String,
}

impl<'a> WordCounts<'a> {
    fn add(&mut self, text: &'a str) {
        let WordCounts {
            runs: seen,
            split,
            ids,
            counts,
            total,
            buf,
        } = self;
        runs(text, true, |raw, ascii| {
            let (start, end) = *seen.entry(raw).or_insert_with(|| {
                let start = split.len() as u32;
                run_words(raw, ascii, buf, |word| {
                    let id = match ids.get(word) {
                        Some(&id) => id,
                        None => {
                            let id = counts.len() as u32;
                            ids.insert(word.to_string(), id);
                            counts.push(0);
                            id
                        }
                    };
                    split.push(id);
                });
                (start, split.len() as u32)
            });
            for &id in &split[start as usize..end as usize] {
                counts[id as usize] += 1;
            }
            *total = total.saturating_add(end - start);
        });
    }
}

/// The weights of a definition's text columns (name, qualified name, name sub-tokens,
/// signature, docstring) in the definition word index, in half-units: 10, 4, 6, 1 and 0.5.
pub const DEFINITION_COLUMN_WEIGHTS: [u32; 5] = [20, 8, 12, 2, 1];

/// The words of one file's definitions, for the definition word index.
#[derive(Debug, Default, PartialEq)]
pub struct DefinitionWords {
    /// Each definition's length in words, by ordinal (every word counts, as in `nodes_fts`).
    pub lengths: Vec<u32>,
    /// Each search word, sorted, with the definitions holding it (ordinal, and the weighted
    /// count: the sum over its columns of `DEFINITION_COLUMN_WEIGHTS` times the count).
    pub postings: Vec<(String, Vec<(u32, u32)>)>,
}

/// `DefinitionWords` of definitions given as their five text columns (see
/// `DEFINITION_COLUMN_WEIGHTS`), by ordinal. A word is a lowercase run of letters and digits,
/// as the full-text index `nodes_fts` splits them; only search words (see `words`) are kept.
pub fn definition_words<'a>(
    definitions: impl IntoIterator<Item = [&'a str; 5]>,
) -> DefinitionWords {
    let mut lengths = Vec::new();
    let mut postings: rustc_hash::FxHashMap<String, Vec<(u32, u32)>> = Default::default();
    let mut lower = String::new();
    for (ordinal, columns) in definitions.into_iter().enumerate() {
        let ordinal = ordinal as u32;
        let mut length = 0u32;
        for (column, weight) in columns.iter().zip(DEFINITION_COLUMN_WEIGHTS) {
            runs(column, false, |raw, ascii| {
                length = length.saturating_add(1);
                lower.clear();
                if ascii {
                    lower.push_str(raw);
                    lower.make_ascii_lowercase();
                } else {
                    lower.extend(raw.chars().flat_map(char::to_lowercase));
                }
                if !keep(&lower) {
                    return;
                }
                // A definition's entries are the last of each list: they are added in order.
                match postings.get_mut(lower.as_str()) {
                    Some(list) => match list.last_mut() {
                        Some((o, w)) if *o == ordinal => *w = w.saturating_add(weight),
                        _ => list.push((ordinal, weight)),
                    },
                    None => {
                        postings.insert(lower.clone(), vec![(ordinal, weight)]);
                    }
                }
            });
        }
        lengths.push(length);
    }
    let mut postings: Vec<(String, Vec<(u32, u32)>)> = postings.into_iter().collect();
    postings.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    DefinitionWords { lengths, postings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_and_at_most_eight_bytes() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORD_KEYS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORDS.iter().all(|w| w.len() <= 8 && !keep(w)));
        assert!(keep("often") && keep("abou") && keep("thesaurus") && !keep("x"));
    }

    #[test]
    fn a_file_counts_its_path_and_its_words() {
        let (total, counts) = file_words(
            "billing/ledger.py",
            "def refund(amount):\n    return amount * rateLimit\n",
        );
        assert_eq!(total, 10);
        let mut counts: Vec<(&str, u32)> = counts.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        counts.sort_unstable();
        assert_eq!(
            counts,
            [
                ("amount", 2),
                ("billing", 1),
                ("def", 1),
                ("ledger", 1),
                ("limit", 1),
                ("py", 1),
                ("rate", 1),
                ("refund", 1),
                ("return", 1)
            ]
        );
    }

    #[test]
    fn definition_words_weigh_each_column_and_count_every_word_in_the_length() {
        let found = definition_words([
            [
                "refund",
                "billing.Ledger.refund",
                "refund",
                "def refund(self, amount)",
                "",
            ],
            [
                "Ledger",
                "billing.Ledger",
                "ledger",
                "class Ledger",
                "A ledger of refunds.",
            ],
        ]);
        assert_eq!(found.lengths, [9, 10]);
        let get = |w: &str| {
            found
                .postings
                .iter()
                .find(|(t, _)| t == w)
                .map(|(_, p)| p.clone())
        };
        // name 20 + qualified name 8 + sub-tokens 12 + signature 2.
        assert_eq!(get("refund"), Some(vec![(0, 42)]));
        assert_eq!(get("ledger"), Some(vec![(0, 8), (1, 20 + 8 + 12 + 2 + 1)]));
        assert_eq!(get("refunds"), Some(vec![(1, 1)]));
        // Stopwords and one-letter words count in the length and are not searchable.
        assert_eq!(get("of"), None);
        assert_eq!(get("a"), None);
        assert!(found.postings.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn ascii_identifiers_split_as_any_text_does() {
        for ident in [
            "parseHTTPRequest",
            "get_user",
            "__init__",
            "XMLParser",
            "Vec2D",
            "ABC",
            "aB",
            "Ab",
            "a1B2c3",
            "HTTP2Server",
            "_",
            "x",
            "snake_Case_MIX",
            "IOError",
            "v2_API_Key9",
        ] {
            let (mut general, mut ascii) = (Vec::new(), Vec::new());
            sub_tokens(
                ident,
                |c| !c.is_alphanumeric(),
                &mut String::new(),
                |t| general.push(t.to_string()),
            );
            ascii_sub_tokens(ident, &mut String::new(), |t| ascii.push(t.to_string()));
            assert_eq!(general, ascii, "{ident}");
        }
    }

    #[test]
    fn runs_split_text_as_the_character_classes_do() {
        let sample = "naïve_café getX=«Größe» 東京2 x_y\u{301}z __init__ ABC_DEF;é";
        let mut text = format!("{sample} ");
        // Characters that share a slot of `runs`' cache of classes, letters or not.
        text.extend((0x2000..0x2400u32).step_by(64).filter_map(char::from_u32));
        text.extend((0x0400..0x0800u32).step_by(64).filter_map(char::from_u32));
        let text = text.as_str();
        for underscores in [true, false] {
            let mut found = Vec::new();
            runs(text, underscores, |raw, ascii| {
                assert_eq!(ascii, raw.is_ascii(), "{raw}");
                found.push(raw.to_string());
            });
            let expected: Vec<String> = text
                .split(|c: char| !(c.is_alphanumeric() || (underscores && c == '_')))
                .filter(|raw| !raw.is_empty())
                .map(str::to_string)
                .collect();
            assert_eq!(found, expected, "underscores: {underscores}");
        }
        let mut all = Vec::new();
        words(sample, true, |w| all.push(w.to_string()));
        assert_eq!(
            all,
            [
                "naïve",
                "café",
                "naïve_café",
                "get",
                "größe",
                "東京2",
                "init",
                "abc",
                "def",
                "abc_def"
            ]
        );
    }

    #[test]
    fn a_lowercase_character_is_its_own_lowercase_form() {
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            if c.is_lowercase() {
                assert!(c.to_lowercase().eq([c]), "{c:?}");
            }
        }
    }

    #[test]
    fn splits_camel_snake_and_acronyms() {
        assert_eq!(split_identifier("parseHTTPRequest"), "parse http request");
        assert_eq!(split_identifier("get_user"), "get user");
        assert_eq!(split_identifier("__init__"), "init");
        assert_eq!(split_identifier("XMLParser"), "xml parser");
        assert_eq!(split_identifier("already"), "already");
        assert_eq!(split_identifier("Vec2D"), "vec2 d");
        assert_eq!(split_identifier("a.b::C"), "a b c");
        assert_eq!(split_identifier(""), "");
    }
}
