//! Bash: function definitions (`f() { }` and `function f { }`, nested ones too) and
//! top-level read-only UPPER_CASE variables (`readonly X=1`, `declare -r X=1`) as constants.
//! Comments above a function are its docs.
//!
//! References: every command is a call of its name (commands named by an expansion such as
//! `"$CMD"` are skipped: the name is not known statically); `source f` and `. f` are imports
//! of the file path. Module names come from the path (`scripts/build.sh` -> `scripts.build`).

use super::{dotted_module, unquote, Cx, Def, FileState, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use std::borrow::Cow;
use std::cell::RefMut;
use std::collections::HashSet;
use tree_sitter::Node;

pub struct Bash;

impl Rules for Bash {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "function_definition" => {
                let name = node.child_by_field("name")?;
                Some(
                    Def::new(NodeKind::Function, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field("body")),
                )
            }
            // The assignments are looked at from their command, which the walk visits just
            // before them: asking each one for its parent, and counting its siblings, took
            // time quadratic in the length of the file or of the command.
            "declaration_command" if enclosing == NodeKind::File && is_readonly(node, cx) => {
                let mut c = node.walk();
                let assignments: Vec<Node> = node
                    .named_children(&mut c)
                    .filter(|c| c.kind_str() == "variable_assignment")
                    .collect();
                if let [only] = assignments[..] {
                    // One assignment: the whole `readonly X=1` line is the definition.
                    return constant(only, node, cx);
                }
                state(cx)
                    .readonly
                    .extend(assignments.iter().map(|a| a.id()));
                None
            }
            "variable_assignment" if state(cx).readonly.remove(&node.id()) => {
                constant(node, node, cx)
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        if node.kind_str() != "command" {
            return;
        }
        let Some(name) = node.child_by_field("name") else {
            return;
        };
        // Only literal command names; `"$CMD" arg` runs whatever the variable holds.
        let Some(word) = name.named_child(0).filter(|w| w.kind_str() == "word") else {
            return;
        };
        let command = cx.text(word);
        if command == "source" || command == "." {
            if let Some(file) = node.child_by_field("argument") {
                let path = match file.kind_str() {
                    "string" | "raw_string" => unquote(cx.text(file)),
                    _ => cx.text(file),
                };
                out.push(cx.import(path, "", None, node));
            }
            return;
        }
        out.push(cx.reference(RefKind::Call, command, node));
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &[], &[])
    }

    fn file_state(&self, _path: &str) -> FileState {
        FileState::Bash(State::default())
    }

    fn parser_input<'s>(&self, src: &'s str) -> Cow<'s, str> {
        latin1_only(src)
    }
}

/// `src` with every character above U+00FF replaced by one or two characters of the same
/// byte length that the grammar reads the same way: spaces for a space, otherwise Latin-1
/// letters (`é`, and `x` for an odd byte), which like any non-ASCII character are word
/// characters to it and neither letters nor digits to its C scanner.
///
/// tree-sitter-bash 0.25's scanner tests the character after `{` with `isdigit`, which
/// is defined for bytes only: a larger code point reads past the C library's table and
/// crashes the process (`{` followed by U+10FFFF is enough).
fn latin1_only(src: &str) -> Cow<'_, str> {
    // U+0100 and above start with a byte from 0xC4 on.
    if !src.bytes().any(|b| b >= 0xc4) {
        return Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chars() {
        if u32::from(c) <= 0xff {
            out.push(c);
            continue;
        }
        let len = c.len_utf8();
        if c.is_whitespace() {
            out.extend(std::iter::repeat_n(' ', len));
        } else {
            out.extend(std::iter::repeat_n('é', len / 2));
            if len % 2 == 1 {
                out.push('x');
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_the_scanner_cannot_take_are_replaced_in_place() {
        let src = "{\u{10ffff}..} echo 日本 \u{3000}ok é $x\n";
        let safe = latin1_only(src);
        assert_eq!(safe.len(), src.len());
        assert_eq!(safe, "{éé..} echo éxéx    ok é $x\n");
        assert!(matches!(latin1_only("echo é ok\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_brace_before_a_large_code_point_parses() {
        // Without the substitution this crashed the process (tree-sitter-bash#337).
        let bash = crate::lang::by_name("bash").unwrap();
        for src in [
            "{\u{10ffff}",
            "{1..\u{31860}}",
            "f() { echo {\u{1f600}; }\n",
        ] {
            let x = crate::lang::extract::extract(bash, "a.sh", src);
            assert!(!x.timed_out, "{src:?}");
        }
        let x = crate::lang::extract::extract(bash, "b.sh", "f\u{1f600}() { g; }\n");
        assert_eq!(x.nodes[1].name, "f\u{1f600}");
    }

    #[test]
    fn read_only_declarations_define_constants_in_linear_time() {
        use crate::lang::testing::extract_on_worker;
        let x = extract_on_worker(
            "a.sh",
            "readonly A=1\nreadonly B=1 C=2 d=3\nf() { readonly E=1; }\n".into(),
        );
        let defs: Vec<(&str, u32, u32)> = x.nodes[1..]
            .iter()
            .map(|n| (n.name.as_str(), n.start_byte, n.end_byte))
            .collect();
        assert_eq!(
            defs,
            [("A", 0, 12), ("B", 22, 25), ("C", 26, 29), ("f", 34, 55)]
        );
        let many: Vec<String> = (0..20_000).map(|i| format!("A{i}=1")).collect();
        let x = extract_on_worker("b.sh", format!("readonly {}\n", many.join(" ")));
        assert!(!x.timed_out);
        assert_eq!(x.nodes.len(), 20_001);
    }
}

/// What the walk of one file remembers between nodes.
#[derive(Default)]
pub struct State {
    /// Assignments of read-only declarations with several of them, each a constant of its
    /// own, by node id: registered at the declaration, taken at the assignment.
    readonly: HashSet<usize>,
}

fn state<'c>(cx: &'c Cx) -> RefMut<'c, State> {
    super::state_of(cx, |s| match s {
        FileState::Bash(s) => Some(s),
        _ => None,
    })
}

/// The constant `assignment` defines, spanning `outer`, if its name is UPPER_CASE.
fn constant<'t>(assignment: Node<'t>, outer: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let name = assignment.child_by_field("name")?;
    let text = cx.text(name);
    is_constant_name(text).then(|| Def::new(NodeKind::Constant, text.to_string(), name, outer))
}

/// `readonly ...`, or `declare`/`typeset` with an `r` among its flags (`-r`, `-rx`).
fn is_readonly(command: Node, cx: &Cx) -> bool {
    let mut c = command.walk();
    let mut children = command.children(&mut c);
    match children.next().map(|k| k.kind_str()) {
        Some("readonly") => true,
        Some("declare" | "typeset") => children.any(|w| {
            w.kind_str() == "word"
                && cx
                    .text(w)
                    .strip_prefix('-')
                    .is_some_and(|flags| flags.contains('r'))
        }),
        _ => false,
    }
}

/// `MAX_RETRIES`, `V2`: all caps with at least one letter.
fn is_constant_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}
