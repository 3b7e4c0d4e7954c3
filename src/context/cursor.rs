//! Continuations of the ranked renderers (map, pack, skeleton). A renderer ranks its items
//! the same way every time it is asked the same question of the same index, so what earlier
//! answers showed is a set of positions in that ranking. A cursor carries those sets and a
//! check over the items at them, so a cursor handed back after the index changed (or with
//! other arguments) is refused instead of silently skipping the wrong items.

use crate::error::invalid;
use anyhow::Result;

/// Longest cursor accepted: a page holds at most a few hundred items, in a few runs.
const MAX_LEN: usize = 16 * 1024;

/// The line of a rendering that hands out its cursor (`what`: "this map", ...).
pub fn offer_line(what: &str, cursor: &str) -> String {
    format!("# continue after {what} with cursor \"{cursor}\"\n")
}

/// For serde: a rendering that continues after nothing says nothing of it.
pub(crate) fn none_shown(shown_before: &usize) -> bool {
    *shown_before == 0
}

/// Sorted, disjoint, non-adjacent runs of positions `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Positions(Vec<(usize, usize)>);

impl Positions {
    pub fn contains(&self, k: usize) -> bool {
        let i = self.0.partition_point(|&(_, end)| end <= k);
        self.0.get(i).is_some_and(|&(start, _)| start <= k)
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|(s, e)| e - s).sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().flat_map(|&(s, e)| s..e)
    }

    /// These positions and `more` (in any order).
    pub fn with(&self, more: impl IntoIterator<Item = usize>) -> Positions {
        let mut all: Vec<usize> = self.iter().chain(more).collect();
        all.sort_unstable();
        all.dedup();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for k in all {
            match runs.last_mut() {
                Some((_, end)) if *end == k => *end += 1,
                _ => runs.push((k, k + 1)),
            }
        }
        Positions(runs)
    }

    /// `3-7,9`: runs of positions, the end inclusive.
    fn encode(&self) -> String {
        let runs: Vec<String> = self
            .0
            .iter()
            .map(|&(s, e)| {
                if e == s + 1 {
                    s.to_string()
                } else {
                    format!("{s}-{}", e - 1)
                }
            })
            .collect();
        runs.join(",")
    }

    /// The runs of `text`, each position under `limit`; `None` when malformed.
    fn decode(text: &str, limit: usize) -> Option<Positions> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        if text.is_empty() {
            return Some(Positions(runs));
        }
        for run in text.split(',') {
            let (s, e) = match run.split_once('-') {
                Some((s, e)) => (s.parse().ok()?, e.parse::<usize>().ok()?.checked_add(1)?),
                None => {
                    let s: usize = run.parse().ok()?;
                    (s, s.checked_add(1)?)
                }
            };
            // In order, apart, and within the ranking: a set no renderer hands out is refused.
            if s >= e || e > limit || runs.last().is_some_and(|&(_, end)| s <= end) {
                return None;
            }
            runs.push((s, e));
        }
        Some(Positions(runs))
    }
}

/// What a renderer's earlier answers showed: one or more sets of positions in its ranking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    pub sets: Vec<Positions>,
}

/// The check of a continuation: a digest of the question (`question`) and of the identity of
/// the item at each shown position (`identity`).
fn check(
    kind: &str,
    question: &str,
    sets: &[Positions],
    identity: &dyn Fn(usize) -> String,
) -> String {
    let mut h = blake3::Hasher::new();
    for part in [kind, question] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    for set in sets {
        for k in set.iter() {
            h.update(identity(k).as_bytes());
            h.update(b"\n");
        }
        h.update(b"\0");
    }
    h.finalize().to_hex()[..12].to_string()
}

/// The cursor for `shown`, of a renderer `kind` asked `question`, `identity` naming the item
/// at a position.
pub fn encode(
    kind: &str,
    question: &str,
    shown: &Shown,
    identity: &dyn Fn(usize) -> String,
) -> String {
    let sets: Vec<String> = shown.sets.iter().map(Positions::encode).collect();
    format!(
        "{kind}.{}.{}",
        check(kind, question, &shown.sets, identity),
        sets.join(".")
    )
}

/// What `cursor` says was shown, for a renderer `kind` asked `question` whose ranking holds
/// `len` items, with `sets` sets: refused when it is not one such a renderer handed out for
/// this question and this index.
pub fn decode(
    cursor: &str,
    kind: &str,
    question: &str,
    sets: usize,
    len: usize,
    identity: &dyn Fn(usize) -> String,
) -> Result<Shown> {
    let malformed = || {
        format!(
            "cursor {:?} is not one this {kind} handed out: pass a previous answer's next_cursor",
            cursor.chars().take(40).collect::<String>()
        )
    };
    if cursor.len() > MAX_LEN {
        invalid!("{}", malformed());
    }
    let mut parts = cursor.split('.');
    if parts.next() != Some(kind) {
        invalid!("{}", malformed());
    }
    let Some(digest) = parts.next() else {
        invalid!("{}", malformed());
    };
    let decoded: Option<Vec<Positions>> = parts.map(|p| Positions::decode(p, len)).collect();
    let Some(decoded) = decoded.filter(|d| d.len() == sets) else {
        invalid!("{}", malformed());
    };
    if check(kind, question, &decoded, identity) != digest {
        invalid!(
            "the cursor was handed out for other arguments or an earlier state of the index: \
             call again without it"
        );
    }
    Ok(Shown { sets: decoded })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(k: usize) -> String {
        format!("item{k}")
    }

    #[test]
    fn positions_merge_into_runs_and_round_trip() {
        let p = Positions::default().with([7, 3, 4, 5, 9, 4]);
        assert_eq!(p.encode(), "3-5,7,9");
        assert_eq!(p.len(), 5);
        assert!(p.contains(4) && p.contains(9) && !p.contains(6) && !p.contains(10));
        assert_eq!(Positions::decode("3-5,7,9", 10), Some(p.clone()));
        assert_eq!(p.with([6]).encode(), "3-7,9");
    }

    #[test]
    fn a_cursor_round_trips_and_checks_what_it_skips() {
        let shown = Shown {
            sets: vec![Positions::default().with([0, 1, 2, 5])],
        };
        let c = encode("map", "query", &shown, &names);
        assert_eq!(decode(&c, "map", "query", 1, 10, &names).unwrap(), shown);
        // Other arguments, another ranking, another renderer: refused.
        assert!(decode(&c, "map", "other query", 1, 10, &names).is_err());
        let renamed = |k: usize| if k == 5 { "moved".into() } else { names(k) };
        assert!(decode(&c, "map", "query", 1, 10, &renamed).is_err());
        assert!(decode(&c, "pack", "query", 1, 10, &names).is_err());
        // Positions past the ranking's end.
        assert!(decode(&c, "map", "query", 1, 5, &names).is_err());
    }

    #[test]
    fn malformed_cursors_are_refused_without_allocating_their_claims() {
        for bad in [
            "",
            "map",
            "map.abc",
            "map.abc.3-1",
            "map.abc.5,3",
            "map.abc.1-2,2",
            "map.abc.0-18446744073709551615",
            "map.abc.x",
            "map.abc.1.2",
        ] {
            let e = decode(bad, "map", "q", 1, usize::MAX, &names).unwrap_err();
            assert!(
                e.to_string().contains("not one this map handed out"),
                "{bad}: {e}"
            );
        }
    }
}
