//! Bash: function definitions (`f() { }` and `function f { }`, nested ones too) and
//! top-level read-only UPPER_CASE variables (`readonly X=1`, `declare -r X=1`) as constants.
//! Comments above a function are its docs.
//!
//! References: every command is a call of its name (commands named by an expansion such as
//! `"$CMD"` are skipped: the name is not known statically); `source f` and `. f` are imports
//! of the file path. Module names come from the path (`scripts/build.sh` -> `scripts.build`).

use super::{dotted_module, unquote, Cx, Def, Rules};
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Bash;

impl Rules for Bash {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind() {
            "function_definition" => {
                let name = node.child_by_field_name("name")?;
                Some(
                    Def::new(NodeKind::Function, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field_name("body")),
                )
            }
            "variable_assignment" if enclosing == NodeKind::File => {
                let command = node.parent()?;
                if command.kind() != "declaration_command" || !is_readonly(command, cx) {
                    return None;
                }
                let name = node.child_by_field_name("name")?;
                let text = cx.text(name);
                if !is_constant_name(text) {
                    return None;
                }
                // One assignment: the whole `readonly X=1` line is the definition.
                let assignments = command
                    .named_children(&mut command.walk())
                    .filter(|c| c.kind() == "variable_assignment")
                    .count();
                let outer = if assignments == 1 { command } else { node };
                Some(Def::new(NodeKind::Constant, text.to_string(), name, outer))
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        if node.kind() != "command" {
            return;
        }
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        // Only literal command names; `"$CMD" arg` runs whatever the variable holds.
        let Some(word) = name.named_child(0).filter(|w| w.kind() == "word") else {
            return;
        };
        let command = cx.text(word);
        if command == "source" || command == "." {
            if let Some(file) = node.child_by_field_name("argument") {
                let path = match file.kind() {
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
}

/// `readonly ...`, or `declare`/`typeset` with an `r` among its flags (`-r`, `-rx`).
fn is_readonly(command: Node, cx: &Cx) -> bool {
    let mut c = command.walk();
    let mut children = command.children(&mut c);
    match children.next().map(|k| k.kind()) {
        Some("readonly") => true,
        Some("declare" | "typeset") => children.any(|w| {
            w.kind() == "word"
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
