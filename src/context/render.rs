//! Text pieces the renderers share: a definition's signature line, code fences, XML escaping,
//! a query as an answer restates it.

use crate::context::defgraph::Def;

/// How much of a query an answer restates.
pub const QUERY_SHOWN: usize = 100;

/// A query's first `chars` characters, whitespace folded, `...` when there is more: how an
/// answer restates what it was asked (a whole issue text would cost the budget it fits under).
pub fn short_query(q: &str, chars: usize) -> String {
    let q: String = q.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = q.chars().take(chars).collect();
    let ell = if short.len() < q.len() { "..." } else { "" };
    format!("{short}{ell}")
}

/// A definition's signature, indented, its decorator and attribute lines each on a line of
/// their own, the last line followed by `  # qualified.name`:
/// `def charge(amount, currency="EUR") -> Payment:  # src.payments.service.charge`
pub fn signature_lines(def: &Def, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let signature = def.signature.as_deref().unwrap_or(def.name.as_str());
    let mut out = String::new();
    let mut lines = signature
        .lines()
        .filter(|l| !l.trim().is_empty())
        .peekable();
    while let Some(line) = lines.next() {
        out.push_str(&pad);
        out.push_str(line.trim());
        if lines.peek().is_none() {
            out.push_str("  # ");
            out.push_str(&def.qualified_name);
        }
        out.push('\n');
    }
    if out.is_empty() {
        out = format!("{pad}{}  # {}\n", def.name, def.qualified_name);
    }
    out
}

/// The fence of a Markdown code block around `code`, long enough that no run of backticks in
/// `code` closes it early.
pub fn fence(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

/// Text escaped for an XML attribute or element.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as CDATA: a `]]>` inside is split across two sections, so nothing ends early.
pub fn cdata(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    format!("<![CDATA[{}]]>", cleaned.replace("]]>", "]]]]><![CDATA[>"))
}

/// Markdown code-block language tag of an indexed language name (the names are the usual
/// tags; other text files get none).
pub fn code_tag(language: &str) -> &str {
    if language == "text" {
        ""
    } else {
        language
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdata_survives_its_terminator() {
        let c = cdata("a ]]> b");
        assert_eq!(c, "<![CDATA[a ]]]]><![CDATA[> b]]>");
        // Undoing the sections gives the text back.
        let inner = c
            .trim_start_matches("<![CDATA[")
            .trim_end_matches("]]>")
            .replace("]]><![CDATA[", "");
        assert_eq!(inner, "a ]]> b");
    }

    #[test]
    fn xml_escapes_markup_and_quotes() {
        assert_eq!(
            xml_escape("a<b & \"c\"'"),
            "a&lt;b &amp; &quot;c&quot;&apos;"
        );
    }

    #[test]
    fn fences_outgrow_backticks_inside() {
        assert_eq!(fence("x = 1"), "```");
        assert_eq!(fence("s = '````'"), "`````");
    }
}
