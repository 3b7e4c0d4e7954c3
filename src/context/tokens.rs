//! Token counting for every rendered context: a real BPE tokenizer (tiktoken's o200k_base by
//! default, cl100k_base on request), and the budget arithmetic the renderers share.
//!
//! Counts come from the `bpe-openai` crate, which gives tiktoken's tokens exactly (checked
//! here against tiktoken-rs) with its tables built at compile time and no shared regex scratch
//! space: tiktoken-rs's copies of its pattern share one pool, which a server's threads counting
//! at once fought over (13% of its CPU under 8 clients on Django).

use rustc_hash::FxHashMap;
use serde::Serialize;

/// The BPE tokenizer budgets are counted with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Tokenizer {
    // tiktoken's o200k_base (GPT-4o and later). Plain comments: doc comments on the
    // variants would turn the command line's help into its long form.
    #[default]
    #[value(alias = "o200k_base")]
    O200k,
    // tiktoken's cl100k_base (GPT-4, GPT-3.5).
    #[value(alias = "cl100k_base")]
    Cl100k,
}

impl Tokenizer {
    pub fn as_str(self) -> &'static str {
        match self {
            Tokenizer::O200k => "o200k",
            Tokenizer::Cl100k => "cl100k",
        }
    }

    /// Loads the tokenizer's tables on another thread, so that the caller's own work overlaps
    /// with it; the first `count` waits for the load.
    pub fn warm_in_background(self) {
        std::thread::spawn(move || self.count(""));
    }

    /// Tokens of `text`, special-token text counted as plain text (as an API sees pasted code).
    ///
    /// The tokenizer splits the text into pieces by its pattern, then encodes each piece on its
    /// own: the count is the sum over pieces, and a piece's count is remembered. Code repeats
    /// its pieces (indentation, keywords, names), and a renderer counts a text again with a
    /// few more or fewer parts, so most pieces are found rather than encoded.
    pub fn count(self, text: &str) -> usize {
        let tokenizer = match self {
            Tokenizer::O200k => bpe_openai::o200k_base(),
            Tokenizer::Cl100k => bpe_openai::cl100k_base(),
        };
        let text = tokenizer.normalize(text);
        PIECE_COUNTS.with_borrow_mut(|caches| {
            let cache = &mut caches[self as usize];
            if cache.len() >= PIECES_REMEMBERED {
                cache.clear();
            }
            tokenizer
                .split(text.as_str())
                .map(|piece| {
                    let piece = piece.as_bytes();
                    if piece.len() > PIECE_BYTES_REMEMBERED {
                        return tokenizer.bpe.count(piece);
                    }
                    if let Some(&n) = cache.get(piece) {
                        return n as usize;
                    }
                    let n = tokenizer.bpe.count(piece);
                    cache.insert(piece.into(), n as u32);
                    n
                })
                .sum()
        })
    }
}

/// Pieces remembered per thread and tokenizer (about 1 MB; a server has a thread per core
/// and a few more), and the longest remembered: longer ones are rare.
const PIECES_REMEMBERED: usize = 1 << 14;
const PIECE_BYTES_REMEMBERED: usize = 48;

thread_local! {
    static PIECE_COUNTS: std::cell::RefCell<[FxHashMap<Box<[u8]>, u32>; 2]> =
        Default::default();
}

/// A number of tokens that `text` cannot be under, with either tokenizer, found without
/// tokenizing: the pieces that the tokenizers' pre-splitting always gives tokens of their own.
/// A run of letters is at least one token (anything not ASCII counts as a letter, which can
/// only merge runs, never split them), a run of digits one per three digits, a run of ASCII
/// punctuation one unless it is a single character right before a letter (which it joins) or
/// follows a newline that follows punctuation (that token takes newlines and `/`), and a
/// newline right after a letter or digit one. A `'` joins the run it is in: it may be part of
/// a contraction (`don't`) as well as of punctuation.
pub fn floor(text: &str) -> usize {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Class {
        Letter,
        Digit,
        Punct,
        Space,
        Newline,
    }
    fn class(c: char) -> Option<Class> {
        Some(match c {
            '\'' => return None,
            '\n' | '\r' => Class::Newline,
            c if c.is_whitespace() => Class::Space,
            c if c.is_numeric() => Class::Digit,
            c if c.is_ascii() && !c.is_ascii_alphabetic() => Class::Punct,
            _ => Class::Letter,
        })
    }
    // The tokens of a run of `class` that ends before `next` (`None`: the end of the text).
    let close = |class: Class, len: usize, digits: usize, next: Option<Class>, absorbed: bool| {
        match class {
            Class::Punct if !(absorbed || len == 1 && next == Some(Class::Letter)) => 1,
            Class::Digit => digits.div_ceil(3),
            _ => 0,
        }
    };
    let mut floor = 0;
    let (mut prev, mut len, mut digits) = (Class::Space, 0, 0);
    let (mut absorbed, mut newline_after_punct) = (false, false);
    for c in text.chars() {
        let Some(k) = class(c) else {
            len += 1;
            continue;
        };
        if k == prev {
            len += 1;
            digits += usize::from(k == Class::Digit);
            continue;
        }
        floor += close(prev, len, digits, Some(k), absorbed);
        match k {
            Class::Letter => floor += 1,
            Class::Newline => {
                floor += usize::from(matches!(prev, Class::Letter | Class::Digit));
                newline_after_punct = prev == Class::Punct;
            }
            Class::Punct => absorbed = prev == Class::Newline && newline_after_punct,
            _ => {}
        }
        (prev, len, digits) = (k, 1, usize::from(k == Class::Digit));
    }
    floor + close(prev, len, digits, None, absorbed)
}

/// What a rendering put in and what it left out, in the terms every renderer reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Account {
    pub tokenizer: Tokenizer,
    pub budget: usize,
    /// Tokens of the whole output, this account's own lines included.
    pub tokens: usize,
    pub included: usize,
    pub dropped: usize,
}

/// How many of what a page left out its closing list names, decided on the first rendering of
/// a page of so many items and kept for its re-renderings: a list that followed the count the
/// header states would change that count in turn, and the self-counting fit would not settle.
#[derive(Default)]
pub struct ListedOnce(Option<(usize, usize)>);

impl ListedOnce {
    /// The number for a page of `items` items, decided by `decide` the first time.
    pub fn get(&mut self, items: usize, decide: impl FnOnce() -> usize) -> usize {
        match self.0 {
            Some((page, n)) if page == items => n,
            _ => {
                let n = decide();
                self.0 = Some((items, n));
                n
            }
        }
    }
}

/// The room a rendering keeps for its list of what it left out, when asked for one: a tenth
/// of the budget, at most 200 tokens (otherwise the items would take it all).
pub fn dropped_reserve(budget: usize, show_dropped: bool) -> usize {
    if show_dropped {
        (budget / 10).min(200)
    } else {
        0
    }
}

/// Items chosen in priority order, each whole or not at all: an item that does not fit is
/// skipped and the scan goes on, so smaller items later in the order still get their turn.
/// `costs[i]` is item i's tokens; returns the indexes taken, in priority order.
pub fn select_greedy(costs: &[usize], room: usize) -> Vec<usize> {
    let mut used = 0;
    let mut taken = Vec::new();
    for (i, &cost) in costs.iter().enumerate() {
        if used + cost <= room {
            used += cost;
            taken.push(i);
        }
    }
    taken
}

/// Renders `taken` with its own token count written into it, and makes that count exact:
/// `render(taken, n)` must mention `n` as the output's tokens. Digits tokenize in groups, so
/// the count is iterated to a fixed point. When the output is over `budget`, the last taken
/// item (the least important) is dropped and the rendering redone, so the result never
/// exceeds the budget; `None` when not even the empty rendering fits.
pub fn fit_exact(
    tokenizer: Tokenizer,
    budget: usize,
    mut taken: Vec<usize>,
    mut render: impl FnMut(&[usize], usize) -> String,
) -> Option<(Vec<usize>, String, usize)> {
    loop {
        if let Some((text, n)) = self_counted(tokenizer, &taken, &mut render) {
            if n <= budget {
                return Some((taken, text, n));
            }
        }
        taken.pop()?;
    }
}

/// The rendering whose stated token count is its true count, if one is found near the first.
fn self_counted(
    tokenizer: Tokenizer,
    taken: &[usize],
    render: &mut impl FnMut(&[usize], usize) -> String,
) -> Option<(String, usize)> {
    let first = tokenizer.count(&render(taken, 0));
    // Stating n instead of 0 changes the count by the tokens of n's digits (when the text
    // states it once): the count that states itself, found on the number alone, is usually
    // right the first time it is rendered, and is checked like any other guess.
    let zero = tokenizer.count("0");
    let mut guess = first;
    for _ in 0..4 {
        guess = (first + tokenizer.count(&guess.to_string())).saturating_sub(zero);
    }
    for _ in 0..6 {
        let text = render(taken, guess);
        let n = tokenizer.count(&text);
        if n == guess {
            return Some((text, n));
        }
        guess = n;
    }
    // An oscillation between neighbours: try each near value once.
    (guess.saturating_sub(4)..guess + 5).find_map(|g| {
        let text = render(taken, g);
        (tokenizer.count(&text) == g).then_some((text, g))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tiktoken's own count, by the tiktoken-rs crate.
    fn tiktoken(tk: Tokenizer, text: &str) -> usize {
        match tk {
            Tokenizer::O200k => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        }
        .encode_ordinary(text)
        .len()
    }

    #[test]
    fn counts_are_tiktokens() {
        let texts = [
            include_str!("pack.rs"),
            include_str!("../../README.md"),
            include_str!("../../migrations/0001_initial.sql"),
            "é(ü='ß', ö=\"…\") — Ⅻ ½ ٣٤٥ 日本語 e\u{301}x a—b (— '' ' 's I'LL don't",
            "x  \n\n\n   \t\r\n  y    \u{a0}z 12345678901 0x1F ***/// <<<>>> $$ @@ <|endoftext|>",
            "",
            " ",
            "a",
            "   \n",
        ];
        for tk in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for text in texts {
                assert_eq!(
                    tk.count(text),
                    tiktoken(tk, text),
                    "{tk:?}: {:?}",
                    &text[..text.len().min(60)]
                );
            }
        }
        // Random text of the characters that split differently: letters of several scripts
        // and cases, digits, marks, punctuation, apostrophes, spaces, tabs and line breaks.
        let alphabet: Vec<char> =
            "aZ9_ \t\n\r'.,;:(){}[]<>=+-*/\\\"#@$%^&|~`é日ßÆ٣\u{301}\u{a0}—½Ⅻ"
                .chars()
                .collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..400 {
            let len = (seed >> 59) as usize * 4 + 1;
            let text: String = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(seed >> 33) as usize % alphabet.len()]
                })
                .collect();
            for tk in [Tokenizer::O200k, Tokenizer::Cl100k] {
                assert_eq!(tk.count(&text), tiktoken(tk, &text), "{tk:?}: {text:?}");
            }
        }
    }

    #[test]
    fn the_token_floor_is_never_over_the_count() {
        let texts = [
            "def get_queryset(self, request):  # django.contrib.admin.options.ModelAdmin.get_queryset\n",
            "### src/payments/service.py\n# imports: decimal.Decimal, src.payments.models.Payment\n",
            "x='abc', y=\"don't\", z=(\"'\", '''''), n=1234567, m=12'''''\n",
            "a:\n/\n/b\n:\n/#c\n\n\n  \n\t\r\n",
            "é(ü='ß', ö=\"…\") — Ⅻ ½ ٣٤٥ 日本語 e\u{301}x a—b (— '' ' 's",
            "    @property\n    def label(self) -> str:  # shop.models.Payment.label\n\n",
            "fn f<'a>(x: &'a str) -> Result<Vec<u8>, Box<dyn Error>>  # a.b#2\n",
            "path: 2 classes, 14 functions, 6 methods — Name1, Name2, Name3\n",
            "", "'", "''", "1", "\n", "((((", "a.b.c", "__init__", "x  \n", "12'\n", "abc'\n",
            "1'", "12'''''''", "(\"' x", "'s 't", " 's",
        ];
        for text in texts {
            let floor = floor(text);
            for tk in [Tokenizer::O200k, Tokenizer::Cl100k] {
                assert!(
                    floor <= tk.count(text),
                    "{text:?}: {floor} > {}",
                    tk.count(text)
                );
            }
        }
        // Close enough to be worth having on signatures.
        let sig = texts[0];
        assert!(
            floor(sig) * 3 >= Tokenizer::O200k.count(sig) * 2,
            "{}",
            floor(sig)
        );
    }

    #[test]
    fn greedy_skips_what_does_not_fit_and_keeps_scanning() {
        assert_eq!(select_greedy(&[5, 20, 3, 4, 1], 10), vec![0, 2, 4]);
        assert_eq!(select_greedy(&[11], 10), Vec::<usize>::new());
        assert_eq!(select_greedy(&[], 10), Vec::<usize>::new());
    }

    #[test]
    fn exact_fit_states_its_own_count_and_stays_in_budget() {
        let items: Vec<String> = (0..50).map(|i| format!("item number {i}\n")).collect();
        let render = |taken: &[usize], n: usize| {
            let mut s: String = taken.iter().map(|&i| items[i].as_str()).collect();
            s.push_str(&format!("-- {n} tokens\n"));
            s
        };
        for budget in [0, 3, 10, 37, 100, 1000] {
            let all: Vec<usize> = (0..50).collect();
            match fit_exact(Tokenizer::O200k, budget, all, render) {
                Some((taken, text, n)) => {
                    assert_eq!(Tokenizer::O200k.count(&text), n);
                    assert!(n <= budget, "{n} > {budget}");
                    assert!(text.ends_with(&format!("-- {n} tokens\n")));
                    assert_eq!(text, render(&taken, n));
                }
                None => assert!(Tokenizer::O200k.count(&render(&[], 0)) > budget),
            }
        }
    }

    #[test]
    fn tokenizers_differ_and_parse() {
        use clap::ValueEnum;
        assert_eq!(Tokenizer::from_str("cl100k", false), Ok(Tokenizer::Cl100k));
        assert_eq!(
            Tokenizer::from_str("o200k_base", false),
            Ok(Tokenizer::O200k)
        );
        assert!(Tokenizer::from_str("gpt2", false).is_err());
        let text = "def charge(amount: int) -> Payment:  # src.payments.service.charge";
        assert!(Tokenizer::O200k.count(text) > 5);
        assert!(Tokenizer::Cl100k.count(text) > 5);
    }
}
