//! Secrets never enter the database: every file's text is redacted before it is parsed or
//! stored. A secret is replaced by a typed placeholder (`<redacted:aws-key>`) followed by the
//! line breaks it spanned, so every line keeps its number. What was redacted is reported by
//! path, line and type, never by value.

pub use crate::model::Redaction;
use aho_corasick::AhoCorasick;
use regex::bytes::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A known secret format: its placeholder type, the pattern, and which group is the secret
/// (0: the whole match).
struct Rule {
    kind: &'static str,
    pattern: &'static str,
    group: usize,
    /// Words one of which every match contains (ASCII case ignored): a file without any is
    /// not searched with the rule. Empty: always searched.
    triggers: &'static [&'static str],
    /// Shortest secret (the group's text) the rule takes: lengths are checked here rather
    /// than counted in the pattern, which keeps the automaton small.
    min_len: usize,
    /// Extra test on the secret itself (placeholders and plain words are not secrets).
    check: fn(&str) -> bool,
}

const RULES: &[Rule] = &[
    Rule {
        kind: "private-key",
        pattern: r"(?-u)-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END[A-Z0-9 ]{0,30}PRIVATE KEY( BLOCK)?-----",
        group: 0,
        triggers: &["PRIVATE KEY"],
        min_len: 0,
        check: always,
    },
    Rule {
        kind: "aws-key",
        pattern: r"(?-u)\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        group: 0,
        triggers: &["AKIA", "ASIA", "ABIA", "ACCA"],
        min_len: 0,
        check: always,
    },
    Rule {
        kind: "aws-secret",
        pattern: r#"(?-u)(?i)aws_?secret_?(?:access_?)?key["']?\s*(?:=|:|=>)\s*["']?([A-Za-z0-9/+=]{40})\b"#,
        group: 1,
        triggers: &["secret"],
        min_len: 0,
        check: always,
    },
    Rule {
        kind: "github-token",
        pattern: r"(?-u)\b(?:gh[pousr]_[A-Za-z0-9]+|github_pat_[A-Za-z0-9_]+)\b",
        group: 0,
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        min_len: 33,
        check: always,
    },
    Rule {
        kind: "gitlab-token",
        pattern: r"(?-u)\bglpat-[A-Za-z0-9_\-]+",
        group: 0,
        triggers: &["glpat-"],
        min_len: 26,
        check: always,
    },
    Rule {
        kind: "slack-token",
        pattern: r"(?-u)\bxox[abposr]-[A-Za-z0-9-]+|https://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        group: 0,
        triggers: &["xox", "hooks.slack.com"],
        min_len: 15,
        check: always,
    },
    Rule {
        kind: "stripe-key",
        pattern: r"(?-u)\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]+\b",
        group: 0,
        triggers: &["_live_", "_test_"],
        min_len: 24,
        check: always,
    },
    Rule {
        kind: "google-api-key",
        pattern: r"(?-u)\bAIza[0-9A-Za-z_\-]{35}",
        group: 0,
        triggers: &["AIza"],
        min_len: 0,
        check: always,
    },
    Rule {
        kind: "anthropic-key",
        pattern: r"(?-u)\bsk-ant-[A-Za-z0-9_\-]+",
        group: 0,
        triggers: &["sk-ant-"],
        min_len: 27,
        check: always,
    },
    Rule {
        kind: "openai-key",
        pattern: r"(?-u)\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]+",
        group: 0,
        triggers: &["sk-"],
        min_len: 35,
        check: mixed,
    },
    Rule {
        kind: "jwt",
        pattern: r"(?-u)\beyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+",
        group: 0,
        triggers: &["eyJ"],
        min_len: 40,
        check: always,
    },
    Rule {
        kind: "url-password",
        pattern: r"(?-u)\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@'\x22]+:([^\s/@'\x22]+)@",
        group: 1,
        triggers: &["://"],
        min_len: 3,
        check: url_password,
    },
    Rule {
        kind: "password",
        pattern: r#"(?-u)(?i)\b[\w.\-]*(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|auth_?key|client_?secret)\w*["']?[ \t]*(?:=|:|=>)[ \t]*["']([^"'\s]+)["']"#,
        group: 1,
        triggers: &[
            "password",
            "passwd",
            "pwd",
            "secret",
            "token",
            "api_key",
            "apikey",
            "access_key",
            "accesskey",
            "auth_key",
            "authkey",
            "client_secret",
            "clientsecret",
        ],
        min_len: 8,
        check: credential,
    },
    Rule {
        kind: "high-entropy",
        pattern: r#"(?-u)\w["']?[ \t]*(?:=|:|=>)[ \t]*["']([A-Za-z0-9+/_\-]+={0,2})["']"#,
        group: 1,
        triggers: &[],
        min_len: 32,
        check: random,
    },
];

struct Compiled {
    /// Every rule's triggers; a match's pattern id is its rule's index in `trigger_rule`.
    triggers: AhoCorasick,
    trigger_rule: Vec<usize>,
    /// The longest trigger's length.
    longest: usize,
    rules: Vec<Regex>,
}

/// Patterns run on bytes with ASCII classes (`(?-u)`): Unicode word boundaries would send
/// every file with a non-ASCII byte to regex's slowest engine.
fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        let (words, trigger_rule): (Vec<&str>, Vec<usize>) = RULES
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.triggers.iter().map(move |&w| (w, i)))
            .unzip();
        let longest = words.iter().map(|w| w.len()).max().unwrap_or(1);
        Compiled {
            triggers: AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(words)
                .expect("redaction triggers"),
            longest,
            trigger_rule,
            rules: RULES
                .iter()
                .map(|r| Regex::new(r.pattern).expect("redaction pattern"))
                .collect(),
        }
    })
}

/// A byte range to replace and the type of secret it held.
type Span = (usize, usize, &'static str);

/// `text` with every secret replaced, and what was replaced. Text without secrets is
/// returned as is, without a copy.
pub fn redact(text: &str) -> (Cow<'_, str>, Vec<Redaction>) {
    replace(text, secrets(text))
}

/// An env file's text (`KEY=value` lines, see `walk::is_env_file`) with every value
/// replaced but numbers and booleans (`PORT=8000`, `DEBUG=false`): what such a file holds
/// is a deployment's configuration, and which of its values are secret cannot be told. The
/// names stay, which is what a reader of the index needs. Known formats elsewhere in the
/// file (a comment, a line that is not an assignment) are redacted as everywhere.
pub fn redact_env(text: &str) -> (Cow<'_, str>, Vec<Redaction>) {
    let mut spans = secrets(text);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if let Some((start, end)) = env_value(line) {
            let (start, end) = (at + start, at + end);
            if !spans.iter().any(|&(s, e, _)| start < e && s < end) {
                spans.push((start, end, "env-value"));
            }
        }
        at += line.len();
    }
    replace(text, spans)
}

/// The byte range of the value in an env file line `[export ]KEY=value`, quotes included,
/// unless the value is empty, a number or a boolean.
fn env_value(line: &str) -> Option<(usize, usize)> {
    let body = line.trim_end_matches(['\n', '\r']);
    let trimmed = body.trim_start();
    if trimmed.starts_with('#') {
        return None;
    }
    let eq = body.find('=')?;
    let key = body[..eq].trim();
    let key = key.strip_prefix("export ").map_or(key, str::trim);
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let value = body[eq + 1..].trim();
    let plain = value.trim_matches(['"', '\'']);
    let harmless = plain.is_empty()
        || plain.parse::<f64>().is_ok()
        || matches!(
            plain.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off"
        );
    if harmless {
        return None;
    }
    let start = eq + 1 + (body[eq + 1..].len() - body[eq + 1..].trim_start().len());
    Some((start, start + value.len()))
}

/// Every secret of a known format in `text`, in rule order.
fn secrets(text: &str) -> Vec<Span> {
    let c = compiled();
    // The rules to run: those without triggers, and those whose trigger occurs.
    let mut run: Vec<bool> = RULES.iter().map(|r| r.triggers.is_empty()).collect();
    // A plain search skips ahead to where a trigger may start, but reports no trigger that
    // overlaps one it reported (`sk-` in `sk-ant-`): all of those lie within a trigger's
    // length of it, and only there is every trigger looked for. An overlapping search of
    // the whole text reads every byte through the automaton, several times slower.
    let bytes = text.as_bytes();
    for m in c.triggers.find_iter(bytes) {
        let near = m.start().saturating_sub(c.longest)..(m.end() + c.longest).min(bytes.len());
        for m in c.triggers.find_overlapping_iter(&bytes[near]) {
            run[c.trigger_rule[m.pattern().as_usize()]] = true;
        }
    }
    // Spans to replace, by rule order: an earlier rule's span wins an overlap.
    let mut spans: Vec<Span> = Vec::new();
    for i in (0..RULES.len()).filter(|&i| run[i]) {
        let rule = &RULES[i];
        for caps in c.rules[i].captures_iter(text.as_bytes()) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            // Patterns start and end on ASCII, so spans fall on character boundaries.
            let Some(secret) = text.get(m.start()..m.end()) else {
                continue;
            };
            let overlaps = spans.iter().any(|&(s, e, _)| m.start() < e && s < m.end());
            if !overlaps && secret.len() >= rule.min_len && (rule.check)(secret) {
                spans.push((m.start(), m.end(), rule.kind));
            }
        }
    }
    spans
}

/// `text` with the (non-overlapping) spans replaced by placeholders.
fn replace(text: &str, mut spans: Vec<Span>) -> (Cow<'_, str>, Vec<Redaction>) {
    if spans.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut found = Vec::with_capacity(spans.len());
    let mut at = 0;
    let mut line = 1u32;
    for (start, end, kind) in spans {
        line += count_lines(&text[at..start]);
        out.push_str(&text[at..start]);
        out.push_str("<redacted:");
        out.push_str(kind);
        out.push('>');
        let breaks = count_lines(&text[start..end]);
        out.extend(std::iter::repeat_n('\n', breaks as usize));
        found.push(Redaction { line, kind });
        line += breaks;
        at = end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), found)
}

fn count_lines(s: &str) -> u32 {
    s.bytes().filter(|&b| b == b'\n').count() as u32
}

fn always(_: &str) -> bool {
    true
}

/// Letters and digits, not a word or an identifier with dashes (`sk-some-long-option-name`).
fn mixed(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && entropy(s) >= 3.5
}

/// Templates and examples are not credentials: `${DB_PASSWORD}`, `<password>`, `%(pass)s`,
/// `***`, `password`.
fn not_placeholder(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !(s.contains(['$', '{', '}', '<', '>', '%', '*'])
        || s.bytes().all(|b| b == s.as_bytes()[0])
        || matches!(
            lower.as_str(),
            "password" | "passwd" | "pass" | "secret" | "pwd" | "changeme" | "example" | "xxx"
        ))
}

/// A value assigned to a password-like name: not a placeholder, and not a name of something
/// (`top_secret`, `passwordFile`, `INVALID_NMTOKEN`, `X-Csrf-Token`, a dotted class or a
/// template path): a secret has a digit or a symbol.
fn credential(s: &str) -> bool {
    let named = s
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    let dotted = s.matches(['.', '/']).count() >= 2;
    not_placeholder(s) && !named && !dotted && !s.contains("://") && entropy(s) >= 3.0
}

/// The password of a URL: examples (`user:pass@`, `foo:bar@`) are short plain words.
fn url_password(s: &str) -> bool {
    let word = s.bytes().all(|b| b.is_ascii_lowercase());
    not_placeholder(s) && !(word && s.len() <= 8)
}

/// A long string that looks random: digits and both cases mixed (hex digests and words
/// have one case), and varied (a random 32-character base64 string averages 4.6 bits per
/// character, rarely below 4).
/// Not random: an alphabet (`ABC...xyz0123...`), a name with word separators
/// (`id_form-0-DELETE`), or camel-case words (`ClientAuthRequestedAndEd25519Given`), whose
/// lowercase runs are long where a random string's average under two characters.
fn random(s: &str) -> bool {
    let digits = s.bytes().any(|b| b.is_ascii_digit());
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    let alphabet = ["abcdefgh", "ABCDEFGH", "01234567"]
        .iter()
        .any(|run| s.contains(run));
    let separators = s.bytes().filter(|&b| b == b'-' || b == b'_').count();
    digits
        && upper
        && lower
        && !alphabet
        && separators < 3
        && mean_lowercase_run(s) < 3.0
        && entropy(s) >= 4.0
}

fn mean_lowercase_run(s: &str) -> f64 {
    let (mut runs, mut letters, mut inside) = (0u32, 0u32, false);
    for b in s.bytes() {
        if b.is_ascii_lowercase() {
            letters += 1;
            if !inside {
                runs += 1;
            }
        }
        inside = b.is_ascii_lowercase();
    }
    if runs == 0 {
        0.0
    } else {
        f64::from(letters) / f64::from(runs)
    }
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_without_secrets_is_not_copied() {
        let text = "def f(password):\n    return check(password)\n";
        let (out, found) = redact(text);
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(found.is_empty());
    }

    #[test]
    fn every_env_value_is_redacted_but_numbers_and_booleans() {
        // Built from pieces: no literal secret in the source.
        let text = format!(
            "# database\nDATABASE_URL=postgres://app:s3cr3t-Pw@db:5432/app\n\
             export SESSION_NAME='myapp'\nPORT=8000\nDEBUG = false\nEMPTY=\n\
             STRIPE={}{}\nnot an assignment\n",
            "sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"
        );
        let (out, found) = redact_env(&text);
        assert_eq!(
            out,
            "# database\nDATABASE_URL=postgres://app:<redacted:url-password>@db:5432/app\n\
             export SESSION_NAME=<redacted:env-value>\nPORT=8000\nDEBUG = false\nEMPTY=\n\
             STRIPE=<redacted:stripe-key>\nnot an assignment\n"
        );
        let kinds: Vec<_> = found.iter().map(|r| (r.line, r.kind)).collect();
        assert_eq!(
            kinds,
            [(2, "url-password"), (3, "env-value"), (7, "stripe-key")]
        );
    }

    #[test]
    fn a_multi_line_secret_keeps_the_line_count() {
        let text = "a = 1\nKEY = \"\"\"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\"\"\"\ndef g():\n    pass\n";
        let (out, found) = redact(text);
        assert_eq!(out.lines().count(), text.lines().count());
        assert_eq!(
            found,
            [Redaction {
                line: 2,
                kind: "private-key"
            }]
        );
        assert!(!out.contains("MIIEow"));
        assert!(out.contains("KEY = \"\"\"<redacted:private-key>\n\n\n\"\"\"\ndef g():"));
    }

    #[test]
    fn plain_words_and_placeholders_are_not_credentials() {
        for text in [
            "password = 'top_secret'\n",
            "PASSWORD = \"${DB_PASSWORD}\"\n",
            "url = 'postgres://user:<password>@localhost/db'\n",
            "url = 'postgres://user:password@localhost/db'\n",
            "token = 'password_reset_token'\n",
            "PASSWORD_FILE = \"passwordFile\"\n",
            "INVALID_NMTOKEN = \"INVALID_NMTOKEN\"\n",
            "template = \"custom_admin/password_change_form.html\"\n",
            "CHARS = \"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\"\n",
            "name: \"ClientAuthRequestedAndEd25519Given\",\n",
            "id=\"id_generic_relations-taggeditem-content_type-object_id-0-DELETE\"\n",
            "url = \"postgres://myuser:mypass@localhost/somedatabase\"\n",
            "digest = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n",
        ] {
            let (_, found) = redact(text);
            assert!(found.is_empty(), "{text}: {found:?}");
        }
    }
}
