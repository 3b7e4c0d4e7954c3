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
        sub_tokens(raw, &mut buf, |part| {
            if keep(part) {
                emit(part);
                parts += 1;
            }
        });
        if whole && parts > 1 {
            let lower = raw.to_lowercase();
            if keep(&lower) {
                emit(&lower);
            }
        }
    }
}

fn keep(word: &str) -> bool {
    word.chars().nth(1).is_some() && STOPWORDS.binary_search(&word).is_err()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
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
