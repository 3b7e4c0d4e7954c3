//! Cheap answers to the two questions the rules ask of nearly every node: its kind and its
//! child in a field. `Node::kind` measures and validates the kind's C string on every call,
//! and `Node::child_by_field_name` compares the name with each of the grammar's field names
//! in turn; on the Linux kernel's C the two cost a sixth of extraction's time outside the
//! parser. Both answers come from tables made once per grammar.

use std::cell::Cell;
use std::sync::Mutex;
use tree_sitter::Node;

/// Kind and field lookups through per-grammar tables; the same answers as
/// `Node::kind` and `Node::child_by_field_name`.
pub trait NodeExt<'t> {
    /// The node's kind, as `Node::kind` names it.
    fn kind_str(&self) -> &'static str;
    /// The child in field `name`, as `Node::child_by_field_name` finds it.
    fn child_by_field(&self, name: &str) -> Option<Node<'t>>;
    /// The first named child of kind `kind`.
    fn named_child_of_kind(&self, kind: &str) -> Option<Node<'t>>;
}

impl<'t> NodeExt<'t> for Node<'t> {
    fn kind_str(&self) -> &'static str {
        let id = self.kind_id() as usize;
        let kind = with_grammar(*self, |g| g.kinds.get(id).copied()).unwrap_or_else(|| self.kind());
        debug_assert_eq!(kind, self.kind());
        kind
    }

    fn child_by_field(&self, name: &str) -> Option<Node<'t>> {
        let id = with_grammar(*self, |g| {
            g.fields
                .binary_search_by(|(field, _)| (*field).cmp(name))
                .map_or(0, |i| g.fields[i].1)
        });
        if id == 0 {
            // Not a field of this grammar: `child_by_field_name` finds nothing either.
            return None;
        }
        self.child_by_field_id(id)
    }

    fn named_child_of_kind(&self, kind: &str) -> Option<Node<'t>> {
        let mut c = self.walk();
        let found = self.named_children(&mut c).find(|n| n.kind_str() == kind);
        found
    }
}

/// One grammar's names, indexed by its numeric ids.
struct Grammar {
    /// Which grammar (compared by address).
    language: tree_sitter::Language,
    /// Kind names by kind id.
    kinds: Box<[&'static str]>,
    /// Field names and their ids, sorted by name.
    fields: Box<[(&'static str, u16)]>,
}

/// Every grammar's tables made so far: one per grammar for the life of the process (there
/// are a score of grammars), so that a thread can keep a plain reference to the last it used.
static GRAMMARS: Mutex<Vec<&'static Grammar>> = Mutex::new(Vec::new());

thread_local! {
    /// The tables this thread used last: a file's nodes all share one grammar, so the rules'
    /// many questions about them are answered without a lock or a search.
    static LAST: Cell<Option<&'static Grammar>> = const { Cell::new(None) };
}

fn with_grammar<R>(node: Node, f: impl FnOnce(&Grammar) -> R) -> R {
    let language = node.language();
    let grammar = match LAST.get() {
        Some(g) if g.language == *language => g,
        _ => {
            let mut grammars = GRAMMARS.lock().unwrap_or_else(|e| e.into_inner());
            let g = match grammars.iter().find(|g| g.language == *language) {
                Some(g) => *g,
                None => {
                    let g: &'static Grammar = Box::leak(Box::new(Grammar::of(&language)));
                    grammars.push(g);
                    g
                }
            };
            LAST.set(Some(g));
            g
        }
    };
    f(grammar)
}

impl Grammar {
    fn of(language: &tree_sitter::Language) -> Grammar {
        let kinds = (0..language.node_kind_count())
            .map(|id| language.node_kind_for_id(id as u16).unwrap_or(""))
            .collect();
        let mut fields: Vec<(&'static str, u16)> = (1..=language.field_count() as u16)
            .filter_map(|id| language.field_name_for_id(id).map(|name| (name, id)))
            .collect();
        fields.sort();
        // A name listed twice keeps its first id, as the grammar's own lookup does.
        fields.dedup_by_key(|(name, _)| *name);
        Grammar {
            language: language.clone(),
            kinds,
            fields: fields.into_boxed_slice(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_grammar_does_for_every_kind_and_field() {
        for lang in crate::lang::LANGUAGES {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&lang.grammar()).unwrap();
            let tree = parser.parse("x = f(1)\n", None).unwrap();
            let root = tree.root_node();
            let mut cursor = root.walk();
            let mut stack = vec![root];
            while let Some(node) = stack.pop() {
                assert_eq!(node.kind_str(), node.kind(), "{}", lang.name);
                let language = node.language();
                for id in 1..=language.field_count() as u16 {
                    let name = language.field_name_for_id(id).unwrap();
                    assert_eq!(
                        node.child_by_field(name),
                        node.child_by_field_name(name),
                        "{} field {name}",
                        lang.name
                    );
                }
                assert_eq!(node.child_by_field("no_such_field"), None);
                stack.extend(node.children(&mut cursor));
            }
        }
    }
}
