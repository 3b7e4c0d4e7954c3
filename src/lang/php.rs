//! PHP: classes, interfaces and traits (Interface), enums, functions, methods (a method is a
//! Method even inside an anonymous class), constants (`const` at top level and in classes,
//! one definition per constant), and braced `namespace X { }` blocks (Module). PHPDoc comments
//! come from the comments above a definition; `#[...]` attributes stay in the signature.
//! References: function, method, nullsafe and static calls, `new Foo`, `use` imports (group
//! uses expanded), `require`/`include`, `extends`, `implements`, traits used in a class, and
//! attributes as decorators. The module name of a file is its first `namespace X\Y;`
//! statement with `\` as `.` (empty without one).

use super::{unquote, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Php;

impl Rules for Php {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind_str() {
            "class_declaration" => NodeKind::Class,
            "interface_declaration" | "trait_declaration" => NodeKind::Interface,
            "enum_declaration" => NodeKind::Enum,
            "function_definition" => NodeKind::Function,
            "method_declaration" => NodeKind::Method,
            "namespace_definition" => {
                // `namespace X;` names the whole file (`module_name`); only a braced block
                // nests definitions.
                let body = node.child_by_field("body")?;
                let name_node = node.child_by_field("name")?;
                let name = namespace_dotted(cx.text(name_node));
                return Some(Def::new(NodeKind::Module, name, name_node, node).body(Some(body)));
            }
            "const_declaration" => {
                // A single constant is reported with its whole declaration (attributes, doc
                // comment, `const` keyword); several share one declaration and are reported
                // per element below.
                let element = single_const_element(node)?;
                return const_def(element, node, cx);
            }
            "const_element" => {
                let decl = node.parent()?;
                if single_const_element(decl).is_some() {
                    return None;
                }
                return const_def(node, node, cx);
            }
            _ => return None,
        };
        let name_node = node.child_by_field("name")?;
        Some(
            Def::new(kind, cx.text(name_node).to_string(), name_node, node)
                .body(node.child_by_field("body")),
        )
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "function_call_expression" => {
                if let Some(f) = node.child_by_field("function") {
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            "member_call_expression"
            | "nullsafe_member_call_expression"
            | "scoped_call_expression" => {
                // The callee up to the method name: `$this->save`, `$a?->b`, `Foo::bar`.
                if let Some(name) = node.child_by_field("name") {
                    let callee = cx
                        .src
                        .get(node.start_byte()..name.end_byte())
                        .and_then(|b| std::str::from_utf8(b).ok())
                        .unwrap_or("");
                    out.push(cx.reference(RefKind::Call, callee, node));
                }
            }
            "object_creation_expression" => {
                // `new Foo(...)` calls `Foo`; `new class ... {}` has no name to call.
                let mut c = node.walk();
                let class = node
                    .named_children(&mut c)
                    .find(|n| !matches!(n.kind_str(), "arguments" | "anonymous_class" | "comment"));
                if let Some(class) = class {
                    out.push(cx.reference(RefKind::Call, cx.text(class), node));
                }
            }
            "namespace_use_declaration" => use_imports(node, cx, out),
            "require_expression"
            | "require_once_expression"
            | "include_expression"
            | "include_once_expression" => {
                if let Some(arg) = node.named_child(0) {
                    let text = cx.text(arg);
                    let module = if matches!(arg.kind_str(), "string" | "encapsed_string") {
                        unquote(text)
                    } else {
                        text
                    };
                    out.push(cx.import(module, "", None, node));
                }
            }
            "class_declaration"
            | "interface_declaration"
            | "trait_declaration"
            | "enum_declaration" => {
                let mut c = node.walk();
                for clause in node.children(&mut c) {
                    let kind = match clause.kind_str() {
                        "base_clause" => RefKind::Inherits,
                        "class_interface_clause" => RefKind::Implements,
                        _ => continue,
                    };
                    let mut cc = clause.walk();
                    for base in clause.named_children(&mut cc) {
                        if base.kind_str() != "comment" {
                            out.push(cx.reference(kind, cx.text(base), base));
                        }
                    }
                }
            }
            "use_declaration" => {
                // `use HasFactory, SoftDeletes;` inside a class body mixes traits in.
                let mut c = node.walk();
                for t in node.named_children(&mut c) {
                    if matches!(t.kind_str(), "name" | "qualified_name" | "relative_name") {
                        out.push(cx.reference(RefKind::Implements, cx.text(t), t));
                    }
                }
            }
            "attribute" => {
                // Only attributes of a definition; those on parameters would otherwise land
                // on the enclosing function.
                let on_definition = node
                    .parent()
                    .and_then(|g| g.parent())
                    .and_then(|l| l.parent())
                    .is_some_and(|d| {
                        matches!(
                            d.kind_str(),
                            "class_declaration"
                                | "interface_declaration"
                                | "trait_declaration"
                                | "enum_declaration"
                                | "function_definition"
                                | "method_declaration"
                                | "const_declaration"
                        )
                    });
                let mut c = node.walk();
                let name = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind_str(), "name" | "qualified_name" | "relative_name"));
                if let (true, Some(name)) = (on_definition, name) {
                    out.push(cx.reference(RefKind::Decorator, cx.text(name), node));
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, _path: &str, root: Node, cx: &Cx) -> String {
        let mut c = root.walk();
        let found = root
            .named_children(&mut c)
            .find(|n| n.kind_str() == "namespace_definition" && n.child_by_field("body").is_none())
            .and_then(|n| n.child_by_field("name"))
            .map(|n| namespace_dotted(cx.text(n)))
            .unwrap_or_default();
        found
    }
}

/// The only `const_element` of a declaration, `None` for `const A = 1, B = 2;`.
fn single_const_element(decl: Node) -> Option<Node> {
    let mut c = decl.walk();
    let mut elements = decl
        .named_children(&mut c)
        .filter(|n| n.kind_str() == "const_element");
    let first = elements.next()?;
    elements.next().is_none().then_some(first)
}

fn const_def<'t>(element: Node<'t>, outer: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let mut c = element.walk();
    let name_node = element
        .named_children(&mut c)
        .find(|n| n.kind_str() == "name")?;
    Some(Def::new(
        NodeKind::Constant,
        cx.text(name_node).to_string(),
        name_node,
        outer,
    ))
}

/// `use A\B\C as D;` -> module `A\B`, name `C`, alias `D`; `use A\{B, C\D};` expands to one
/// import per clause with the group prefix prepended.
fn use_imports(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    let mut prefix = "";
    let mut clauses = Vec::new();
    for child in node.named_children(&mut c) {
        match child.kind_str() {
            "namespace_name" => prefix = cx.text(child),
            "namespace_use_clause" => clauses.push(child),
            "namespace_use_group" => {
                let mut gc = child.walk();
                clauses.extend(
                    child
                        .named_children(&mut gc)
                        .filter(|n| n.kind_str() == "namespace_use_clause"),
                );
            }
            _ => {}
        }
    }
    for clause in clauses {
        let mut cc = clause.walk();
        let Some(path) = clause
            .named_children(&mut cc)
            .find(|n| matches!(n.kind_str(), "name" | "qualified_name"))
        else {
            continue;
        };
        let path = cx.text(path).trim_start_matches('\\');
        let full = if prefix.is_empty() {
            path.to_string()
        } else {
            format!("{}\\{}", prefix.trim_start_matches('\\'), path)
        };
        let (module, name) = full.rsplit_once('\\').unwrap_or(("", full.as_str()));
        let alias = cx.field(clause, "alias");
        out.push(cx.import(module, name, alias, clause));
    }
}

/// `App\Models` -> `App.Models`.
fn namespace_dotted(text: &str) -> String {
    text.trim_start_matches('\\').replace('\\', ".")
}
