//! Small text utilities shared by the stages.

/// Splits an identifier into lowercase sub-tokens for search:
/// `parseHTTPRequest` -> `parse http request`, `get_user` -> `get user`, `Vec2D` -> `vec2 d`.
pub fn split_identifier(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 8);
    let mut word_len = 0;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            word_len = 0;
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = word_len > 0
            && c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if word_len == 0 || boundary {
            if !out.is_empty() {
                out.push(' ');
            }
            word_len = 0;
        }
        out.extend(c.to_lowercase());
        word_len += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_identifier;

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
