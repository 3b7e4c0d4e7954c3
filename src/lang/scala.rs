//! Scala (2 and 3): classes, case classes and objects (Class), traits (Interface), enums
//! (Enum), `def`s with bodies (Function, or Method in a type) and abstract `def`
//! declarations (Method), type definitions (Type), packages with bodies and package
//! objects (Module), and constants: `final val` in a template or at top level, and an
//! UPPER_CASE `val` in an object or at top level. Methods of an `extension (x: T)` block are
//! qualified through `T`. Scaladoc comes from the leading comment.
//! References: calls, `new Foo`, imports (selectors expanded, renames as aliases),
//! `extends A with B` (first Inherits, the rest Implements) and annotations.
//! The module name joins the file's body-less `package` clauses; "" when it only has
//! packages with bodies (they are Module definitions); otherwise the directory, dotted.

use super::java::{directory_module, strip_type_args};
use super::{Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Scala;

impl Rules for Scala {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind_str() {
            "class_definition" | "object_definition" => NodeKind::Class,
            "trait_definition" => NodeKind::Interface,
            "enum_definition" => NodeKind::Enum,
            "function_definition" => NodeKind::Function,
            // An abstract `def` can only be a member of a type.
            "function_declaration" => NodeKind::Method,
            "type_definition" => NodeKind::Type,
            "package_object" => NodeKind::Module,
            "package_clause" => {
                // Only a package with a body nests definitions; body-less clauses make up
                // the module name.
                let body = node.child_by_field("body")?;
                let name = node.child_by_field("name")?;
                let text: String = cx.text(name).split_whitespace().collect();
                return Some(Def::new(NodeKind::Module, text, name, node).body(Some(body)));
            }
            "val_definition" => return constant(node, cx),
            "extension_definition" => {
                // `extension (s: String) def f` defines `f` on `String`: name the scope only.
                let params = node.child_by_field("parameters")?;
                let param = params.named_child(0)?;
                let ty = param.child_by_field("type")?;
                let name = strip_type_args(cx.text(ty), '[', ']');
                let mut d = Def::new(NodeKind::Class, name, ty, node);
                d.scope_only = true;
                return Some(d);
            }
            _ => return None,
        };
        let name = node.child_by_field("name")?;
        let mut body = node.child_by_field("body");
        if kind == NodeKind::Function {
            // `def f(x: Int): Int = ...`: the signature stops before the `=`.
            let mut c = node.walk();
            let eq = node.children(&mut c).find(|k| k.kind_str() == "=");
            body = eq.or(body);
        }
        Some(Def::new(kind, cx.text(name).to_string(), name, node).body(body))
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call_expression" => {
                if let Some(mut f) = node.child_by_field("function") {
                    // `foo[Int](x)` calls `foo`.
                    if f.kind_str() == "generic_function" {
                        f = f.child_by_field("function").unwrap_or(f);
                    }
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            "instance_expression" => {
                // `new Foo(args)`, `new Foo[T]`, `new Foo with Bar { ... }`: the first type.
                let mut c = node.walk();
                let ty = node.named_children(&mut c).find(|n| {
                    !matches!(
                        n.kind_str(),
                        "arguments" | "template_body" | "early_defs" | "end_marker"
                    )
                });
                if let Some(ty) = ty {
                    let ty = first_type(ty);
                    let name = strip_type_args(cx.text(ty), '[', ']');
                    out.push(cx.reference(RefKind::Call, &name, node));
                }
            }
            "import_declaration" => import(node, cx, out),
            "class_definition" | "object_definition" | "trait_definition" | "enum_definition"
            | "package_object" => {
                annotations(node, cx, out);
                if let Some(ext) = node.child_by_field("extend") {
                    extends(ext, cx, out);
                }
            }
            "function_definition" | "function_declaration" | "type_definition" => {
                annotations(node, cx, out)
            }
            "val_definition" if constant(node, cx).is_some() => annotations(node, cx, out),
            _ => {}
        }
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut block_packages = false;
        let mut c = root.walk();
        for clause in root.named_children(&mut c) {
            if clause.kind_str() != "package_clause" {
                continue;
            }
            if clause.child_by_field("body").is_some() {
                block_packages = true;
            } else if let Some(name) = clause.child_by_field("name") {
                parts.push(cx.text(name).split_whitespace().collect());
            }
        }
        if !parts.is_empty() {
            parts.join(".")
        } else if block_packages {
            String::new()
        } else {
            directory_module(path)
        }
    }
}

/// `final val X = ...` in a template or at top level, and `val X = ...` with an UPPER_CASE
/// name in an object or at top level. Local values are never constants.
fn constant<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let pattern = node.child_by_field("pattern")?;
    if pattern.kind_str() != "identifier" {
        return None;
    }
    let container = match node.parent()?.kind_str() {
        "compilation_unit" => "top",
        "template_body" | "with_template_body" => node.parent()?.parent()?.kind_str(),
        _ => return None,
    };
    let name = cx.text(pattern);
    let is_final = {
        let mut c = node.walk();
        let mods = node
            .named_children(&mut c)
            .find(|n| n.kind_str() == "modifiers");
        mods.is_some_and(|m| {
            let mut c = m.walk();
            let fin = m.children(&mut c).any(|k| k.kind_str() == "final");
            fin
        })
    };
    let in_object = matches!(
        container,
        "top" | "object_definition" | "package_object" | "package_clause"
    );
    (is_final || (in_object && is_upper_case(name)))
        .then(|| Def::new(NodeKind::Constant, name.to_string(), pattern, node))
}

fn is_upper_case(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The named type of a possibly compound or annotated type (`A with B` -> `A`).
fn first_type(ty: Node) -> Node {
    match ty.kind_str() {
        "compound_type" | "annotated_type" | "applied_constructor_type" => {
            ty.named_child(0).map_or(ty, first_type)
        }
        "generic_type" => ty.child_by_field("type").unwrap_or(ty),
        _ => ty,
    }
}

/// Annotations on a definition, as decorators (name without `@` or arguments).
fn annotations(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = def.walk();
    for ann in def.named_children(&mut c) {
        if ann.kind_str() != "annotation" {
            continue;
        }
        if let Some(name) = ann.child_by_field("name") {
            let name = strip_type_args(cx.text(name), '[', ']');
            out.push(cx.reference(RefKind::Decorator, &name, ann));
        }
    }
}

/// `extends A(args) with B with C` or `extends A, B`: the first type is the superclass
/// (Inherits), the others are mixed-in traits (Implements).
fn extends(clause: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = clause.walk();
    let mut first = true;
    for ty in clause.children_by_field_name("type", &mut c) {
        if !ty.is_named() || ty.kind_str() == "arguments" {
            continue;
        }
        // `A with B` may also come as one compound type.
        let parts: Vec<Node> = if ty.kind_str() == "compound_type" {
            let mut c = ty.walk();
            let parts = ty
                .named_children(&mut c)
                .filter(|n| n.kind_str() != "refinement")
                .collect();
            parts
        } else {
            vec![ty]
        };
        for part in parts {
            let kind = if first {
                RefKind::Inherits
            } else {
                RefKind::Implements
            };
            first = false;
            let name = strip_type_args(cx.text(first_type(part)), '[', ']');
            out.push(cx.reference(kind, &name, part));
        }
    }
}

/// `import a.b.c` (module `a.b`, name `c`), `import a.b._` / `a.b.*` (name `*`),
/// `import a.b.{c, d => e, f as g}` (one import each, renames as aliases, `d => _` hides
/// `d` and imports nothing), and several comma-separated expressions in one statement.
fn import(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut path: Vec<&str> = Vec::new();
    // One pass of a cursor, which knows each child's field: looking a child's field up by
    // its position, and joining the path, at every child took time quadratic in the
    // length of the import.
    let mut c = node.walk();
    let mut more = c.goto_first_child();
    while more {
        let child = c.node();
        let in_path = c.field_name() == Some("path");
        more = c.goto_next_sibling();
        match child.kind_str() {
            "identifier" | "operator_identifier" if in_path => {
                path.push(cx.text(child));
                continue;
            }
            // A comma ends one import expression: `import a.b, c.d`.
            "," => {
                if let Some((name, module)) = path.split_last() {
                    out.push(cx.import(&module.join("."), name, None, node));
                }
            }
            "namespace_selectors" => selectors(child, &path.join("."), node, cx, out),
            "import" | "given" | "." => continue,
            _ if child.is_named() && child.kind_str() != "comment" => {
                selector(child, &path.join("."), node, cx, out)
            }
            _ => continue,
        }
        path.clear();
    }
    if let Some((name, module)) = path.split_last() {
        out.push(cx.import(&module.join("."), name, None, node));
    }
}

fn selectors(list: Node, module: &str, at: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for sel in list.named_children(&mut c) {
        if sel.kind_str() != "comment" {
            selector(sel, module, at, cx, out);
        }
    }
}

/// One import selector: a name, a rename, a wildcard or a `given` type.
fn selector(sel: Node, module: &str, at: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    match sel.kind_str() {
        "arrow_renamed_identifier" | "as_renamed_identifier" => {
            let (Some(name), Some(alias)) =
                (sel.child_by_field("name"), sel.child_by_field("alias"))
            else {
                return;
            };
            if alias.kind_str() != "wildcard" {
                out.push(cx.import(module, cx.text(name), Some(cx.text(alias)), at));
            }
        }
        "namespace_wildcard" => {
            // `_` and `*` import everything; `given` imports all given instances.
            let text = cx.text(sel).trim();
            let name = if matches!(text, "_" | "*") { "*" } else { text };
            out.push(cx.import(module, name, None, at));
        }
        _ => {
            let name = strip_type_args(cx.text(sel), '[', ']');
            out.push(cx.import(module, &name, None, at));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::extract_on_worker;
    use crate::model::RefKind;

    #[test]
    fn a_long_import_is_read_in_linear_time() {
        let x = extract_on_worker("a.scala", "import a.b.{c, d => e}, f.g\n".into());
        let imports: Vec<(&str, &str, Option<&str>)> = x
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Import)
            .map(|r| {
                (
                    r.module.as_deref().unwrap(),
                    r.name.as_str(),
                    r.alias.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            imports,
            [
                ("a.b", "c", None),
                ("a.b", "d", Some("e")),
                ("f", "g", None)
            ]
        );
        // 20,000 path segments took 14 s where the budget is 2.
        let long = format!("import a{}\n", ".b".repeat(20_000));
        assert!(!extract_on_worker("b.scala", long).timed_out);
    }
}
