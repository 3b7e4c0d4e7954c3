//! Small text utilities shared by the stages.

/// Splits an identifier into lowercase sub-tokens for search:
/// `parseHTTPRequest` -> `parse http request`, `get_user` -> `get user`, `Vec2D` -> `vec2 d`.
pub fn split_identifier(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 8);
    let mut buf = String::new();
    sub_tokens(ident, &mut buf, |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    });
    out
}

/// Calls `emit` with each lowercase sub-token of `text` in order (see `split_identifier`),
/// built in `buf`: nothing is allocated once `buf` holds the longest.
fn sub_tokens(text: &str, buf: &mut String, mut emit: impl FnMut(&str)) {
    buf.clear();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
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

/// `sub_tokens` of an ASCII identifier (letters, digits and underscores), byte by byte.
fn ascii_sub_tokens(ident: &[u8], buf: &mut String, mut emit: impl FnMut(&str)) {
    buf.clear();
    for (i, &b) in ident.iter().enumerate() {
        if b == b'_' {
            if !buf.is_empty() {
                emit(buf);
                buf.clear();
            }
            continue;
        }
        let boundary = !buf.is_empty()
            && b.is_ascii_uppercase()
            && i > 0
            && match ident[i - 1] {
                p if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                p if p.is_ascii_uppercase() => {
                    ident.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                }
                _ => false,
            };
        if boundary {
            emit(buf);
            buf.clear();
        }
        buf.push(b.to_ascii_lowercase() as char);
    }
    if !buf.is_empty() {
        emit(buf);
        buf.clear();
    }
}

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
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if raw.is_empty() {
            continue;
        }
        let mut parts = 0;
        let mut part = |part: &str| {
            if keep(part) {
                emit(part);
                parts += 1;
            }
        };
        if raw.is_ascii() {
            ascii_sub_tokens(raw.as_bytes(), &mut buf, &mut part);
        } else {
            sub_tokens(raw, &mut buf, &mut part);
        }
        if whole && parts > 1 {
            let lower = raw.to_lowercase();
            if keep(&lower) {
                emit(&lower);
            }
        }
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

fn keep(word: &str) -> bool {
    // Every stopword is at most eight bytes long.
    word.len() > 8
        || (word.chars().nth(1).is_some()
            && STOPWORD_KEYS
                .binary_search(&packed(word.as_bytes()))
                .is_err())
}

/// A whole file's search words for the full-text file index: its path's and its text's
/// (`words` without compounds), each with its count, sorted, and how many there are in all.
pub fn file_words(path: &str, content: &str) -> (u32, Vec<(String, u32)>) {
    let mut counts: rustc_hash::FxHashMap<String, u32> = Default::default();
    let mut total = 0u32;
    let mut count = |w: &str| {
        total = total.saturating_add(1);
        match counts.get_mut(w) {
            Some(n) => *n += 1,
            None => {
                counts.insert(w.to_string(), 1);
            }
        }
    };
    words(path, false, &mut count);
    words(content, false, &mut count);
    let mut counts: Vec<(String, u32)> = counts.into_iter().collect();
    counts.sort_unstable();
    (total, counts)
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
            for raw in column.split(|c: char| !c.is_alphanumeric()) {
                if raw.is_empty() {
                    continue;
                }
                length = length.saturating_add(1);
                lower.clear();
                if raw.is_ascii() {
                    lower.push_str(raw);
                    lower.make_ascii_lowercase();
                } else {
                    lower.extend(raw.chars().flat_map(char::to_lowercase));
                }
                if !keep(&lower) {
                    continue;
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
            }
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
        let counts: Vec<(&str, u32)> = counts.iter().map(|(w, n)| (w.as_str(), *n)).collect();
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
            sub_tokens(ident, &mut String::new(), |t| general.push(t.to_string()));
            ascii_sub_tokens(ident.as_bytes(), &mut String::new(), |t| {
                ascii.push(t.to_string())
            });
            assert_eq!(general, ascii, "{ident}");
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
