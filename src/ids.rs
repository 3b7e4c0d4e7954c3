//! Identities that every stage shares and that depend on nothing: file ids (a hash of the
//! path), node ids (the file id and the node's ordinal in its file), and the `#k` suffix
//! that keeps qualified names unique. Content-derived, so the same tree always gets the same
//! ids whatever the thread timing.

/// Node ids are `file id << ORDINAL_BITS | ordinal within the file`: a file's nodes form one
/// contiguous id range, and the same file content always gets the same ids. SQL that picks
/// file nodes writes `node_id % 524288 = 0` as a literal (the partial index `refs_scope` of
/// migrations 0002 and 0003, and resolution's query that must match it); a test in
/// `resolve` checks they agree.
pub const ORDINAL_BITS: u32 = 19;
const FILE_ID_BITS: u32 = 63 - ORDINAL_BITS;

/// The id of a file: a hash of its path.
pub fn file_id(path: &str) -> i64 {
    let h = blake3::hash(path.as_bytes());
    let b = h.as_bytes();
    let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    (v >> (64 - FILE_ID_BITS)) as i64
}

/// The first node id of a file and the first id past it.
pub fn node_range(file_id: i64) -> (i64, i64) {
    (file_id << ORDINAL_BITS, (file_id + 1) << ORDINAL_BITS)
}

/// The file a node belongs to.
pub fn file_of(node_id: i64) -> i64 {
    node_id >> ORDINAL_BITS
}

/// A qualified name without its `#k` uniqueness suffix.
pub fn base_name(qualified_name: &str) -> &str {
    match qualified_name.rsplit_once('#') {
        Some((base, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => qualified_name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ranges_are_contiguous_and_disjoint() {
        let f = file_id("src/a.rs");
        let (lo, hi) = node_range(f);
        assert_eq!(hi - lo, 1 << ORDINAL_BITS);
        assert_eq!(file_of(lo), f);
        assert_eq!(file_of(hi - 1), f);
        assert_eq!(node_range(f + 1).0, hi);
        assert_eq!(base_name("a.b#12"), "a.b");
        assert_eq!(base_name("a.b#x"), "a.b#x");
    }
}
