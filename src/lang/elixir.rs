//! Elixir: every construct is a `call` node, told apart by its target identifier.
//! `defmodule Foo.Bar` is a Module named `Foo.Bar` (nested modules append to the enclosing
//! name), `defprotocol` an Interface, `defimpl P, for: T` a Class named `P.T` (the module
//! Elixir generates for it), and `def`/`defp`/`defmacro`/`defmacrop`/`defguard`/`defguardp`/
//! `defdelegate` are Functions (Methods inside a protocol or implementation, where the engine
//! makes them so). `@moduledoc` and `@doc` strings are docstrings. References: calls (not the
//! definition forms, not the head of a `def`, not control-flow forms like `if`/`case`),
//! `alias`/`import`/`require`/`use` as imports, `@behaviour` and `defimpl` as implemented
//! interfaces. Modules name themselves, so the module name of a file is empty.

use super::{dedent, unquote, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Elixir;

/// Targets that define a function-like item.
const FUNCTION_FORMS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
];

/// Targets other than `FUNCTION_FORMS` that are definitions, imports or language constructs
/// rather than calls of project code.
const NOT_CALLS: &[&str] = &[
    "defmodule",
    "defprotocol",
    "defimpl",
    "defstruct",
    "defexception",
    "defoverridable",
    "alias",
    "import",
    "require",
    "use",
    "if",
    "unless",
    "case",
    "cond",
    "with",
    "for",
    "try",
    "receive",
    "quote",
    "unquote",
    "unquote_splicing",
    "__aliases__",
];

impl Rules for Elixir {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        if node.kind_str() != "call" {
            return None;
        }
        let target = node.child_by_field("target")?;
        if target.kind_str() != "identifier" {
            return None;
        }
        let form = cx.text(target);
        let body = do_block(node);
        match form {
            "defmodule" | "defprotocol" => {
                let name_node = first_argument(node)?;
                let kind = if form == "defmodule" {
                    NodeKind::Module
                } else {
                    NodeKind::Interface
                };
                Some(
                    Def::new(kind, cx.text(name_node).to_string(), name_node, node)
                        .body(body)
                        .docstring(body.and_then(|b| moduledoc(b, cx))),
                )
            }
            "defimpl" => {
                let protocol = first_argument(node)?;
                // Without `for:` the implementation is for the enclosing module.
                let for_type =
                    keyword_value(node, "for", cx).or_else(|| enclosing_module(node, cx));
                let name = match for_type {
                    Some(t) => format!("{}.{}", cx.text(protocol), t),
                    None => cx.text(protocol).to_string(),
                };
                Some(
                    Def::new(NodeKind::Class, name, protocol, node)
                        .body(body)
                        .docstring(body.and_then(|b| moduledoc(b, cx))),
                )
            }
            _ if FUNCTION_FORMS.contains(&form) => {
                let head = first_argument(node)?;
                let name_node = function_name(head)?;
                // The one-line form `def f(x), do: ...`: the signature ends before the comma.
                let body = body.or_else(|| {
                    keywords_argument(node)
                        .and_then(|k| k.prev_sibling())
                        .filter(|p| p.kind_str() == ",")
                });
                Some(
                    Def::new(
                        NodeKind::Function,
                        cx.text(name_node).to_string(),
                        name_node,
                        node,
                    )
                    .body(body)
                    .docstring(doc_attribute(node, cx)),
                )
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call" => call(node, cx, out),
            "unary_operator" => {
                // `@behaviour GenServer` declares an implemented interface.
                let Some(attr) = module_attribute(node) else {
                    return;
                };
                let is_behaviour = attr
                    .child_by_field("target")
                    .is_some_and(|t| matches!(cx.text(t), "behaviour" | "behavior"));
                if let Some(arg) = first_argument(attr).filter(|_| is_behaviour) {
                    out.push(cx.reference(RefKind::Implements, cx.text(arg), arg));
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, _path: &str, _root: Node, _cx: &Cx) -> String {
        String::new()
    }
}

fn call(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(target) = node.child_by_field("target") else {
        return;
    };
    // `@doc "..."`, `@spec f(t) :: t`: module attributes, not calls.
    if node
        .parent()
        .is_some_and(|p| module_attribute(p).is_some_and(|a| a.id() == node.id()))
    {
        return;
    }
    if is_function_head(node, cx) || in_typespec(node, cx) {
        return;
    }
    if target.kind_str() == "identifier" {
        let name = cx.text(target);
        match name {
            "alias" | "import" | "require" | "use" => {
                imports(node, name, cx, out);
                return;
            }
            "defimpl" => {
                if let Some(protocol) = first_argument(node) {
                    out.push(cx.reference(RefKind::Implements, cx.text(protocol), protocol));
                }
                return;
            }
            _ if FUNCTION_FORMS.contains(&name) || NOT_CALLS.contains(&name) => return,
            _ => {}
        }
    }
    // `user.name` (no parentheses, not on a module) reads a map field; `Mod.fun` without
    // parentheses is still a remote call.
    if target.kind_str() == "dot"
        && arguments(node).is_none()
        && do_block(node).is_none()
        && target
            .child_by_field("left")
            .is_some_and(|l| l.kind_str() != "alias")
    {
        return;
    }
    // `fun.(x)` calls the anonymous function bound to `fun`.
    let callee = cx.text(target).trim_end_matches('.');
    out.push(cx.reference(RefKind::Call, callee, node));
}

/// Inside `@spec`, `@type`, `@callback` and similar attributes, `name(args)` is a type, not a
/// call.
fn in_typespec(node: Node, cx: &Cx) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind_str() {
            "do_block" | "source" => return false,
            "unary_operator" => {
                if let Some(attr) = module_attribute(n) {
                    return attr.child_by_field("target").is_some_and(|t| {
                        matches!(
                            cx.text(t),
                            "spec" | "type" | "typep" | "opaque" | "callback" | "macrocallback"
                        )
                    });
                }
            }
            _ => {}
        }
        cur = n.parent();
    }
    false
}

/// `alias A.B`, `alias A.{B, C}`, `alias A.B, as: X`, `import A, only: [f: 1]`, `use A`.
fn imports(node: Node, form: &str, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(arg) = first_argument(node) else {
        return;
    };
    let alias = keyword_value(node, "as", cx);
    // `alias A.{B, C}` is `A.B` and `A.C`.
    if arg.kind_str() == "dot" {
        if let (Some(left), Some(right)) = (arg.child_by_field("left"), arg.child_by_field("right"))
        {
            if right.kind_str() == "tuple" {
                let mut c = right.walk();
                for item in right.named_children(&mut c) {
                    let module = format!("{}.{}", cx.text(left), cx.text(item));
                    out.push(cx.import(&module, "", None, node));
                }
                return;
            }
        }
    }
    let module = cx.text(arg);
    if form == "import" {
        // `import M, only: [f: 1, g: 2]` imports the listed functions.
        let only = keyword_pair(node, "only", cx).and_then(|p| p.child_by_field("value"));
        if let Some(list) = only.filter(|l| l.kind_str() == "list") {
            let mut names = Vec::new();
            collect_keyword_keys(list, cx, &mut names);
            if !names.is_empty() {
                for name in names {
                    out.push(cx.import(module, name, None, node));
                }
                return;
            }
        }
    }
    out.push(cx.import(module, "", alias, node));
}

fn collect_keyword_keys<'a>(list: Node, cx: &Cx<'a>, names: &mut Vec<&'a str>) {
    let mut c = list.walk();
    for kw in list.named_children(&mut c) {
        if kw.kind_str() != "keywords" {
            continue;
        }
        let mut kc = kw.walk();
        for pair in kw.named_children(&mut kc) {
            if let Some(key) = pair.child_by_field("key") {
                names.push(keyword_text(cx.text(key)));
            }
        }
    }
}

/// The call inside `def f(x)` / `def f(x) when g` is the head of the definition.
fn is_function_head(node: Node, cx: &Cx) -> bool {
    let mut cur = node;
    let Some(mut parent) = node.parent() else {
        return false;
    };
    if parent.kind_str() == "binary_operator" {
        let is_guarded_head = parent
            .child_by_field("left")
            .is_some_and(|l| l.id() == cur.id())
            && parent
                .child_by_field("operator")
                .is_some_and(|o| cx.text(o) == "when");
        if !is_guarded_head {
            return false;
        }
        cur = parent;
        let Some(p) = parent.parent() else {
            return false;
        };
        parent = p;
    }
    if parent.kind_str() != "arguments" || parent.named_child(0).map(|n| n.id()) != Some(cur.id()) {
        return false;
    }
    parent
        .parent()
        .and_then(|def| def.child_by_field("target"))
        .is_some_and(|t| FUNCTION_FORMS.contains(&cx.text(t)))
}

/// The name of a definition head: `f(x)`, `f(x) when g`, `f` (no parentheses), `a + b`
/// (an operator definition: the operator is the name).
fn function_name(head: Node) -> Option<Node> {
    let mut head = head;
    // `f(x) when a when b`: guards may chain without bound.
    while head.kind_str() == "binary_operator"
        && head.child_by_field("operator")?.kind_str() == "when"
    {
        head = head.child_by_field("left")?;
    }
    match head.kind_str() {
        "call" => head.child_by_field("target"),
        "identifier" => Some(head),
        "binary_operator" => head.child_by_field("operator"),
        _ => None,
    }
}

/// `@name value`: the `name value` call of a module attribute.
fn module_attribute(node: Node) -> Option<Node> {
    if node.kind_str() != "unary_operator" {
        return None;
    }
    if node.child_by_field("operator")?.kind_str() != "@" {
        return None;
    }
    node.child_by_field("operand")
        .filter(|o| o.kind_str() == "call")
}

/// The `@doc` string among the module attributes directly above a definition (`@spec` and
/// `@impl` may sit in between). `@doc false` hides a function and gives no docstring.
fn doc_attribute(def: Node, cx: &Cx) -> Option<String> {
    let mut cur = def.prev_named_sibling();
    while let Some(prev) = cur {
        let attr = module_attribute(prev)?;
        let name = cx.text(attr.child_by_field("target")?);
        if name == "doc" {
            return doc_string(attr, cx);
        }
        cur = prev.prev_named_sibling();
    }
    None
}

/// The `@moduledoc` string of a module body.
fn moduledoc(body: Node, cx: &Cx) -> Option<String> {
    let mut c = body.walk();
    let found = body.named_children(&mut c).find_map(|n| {
        let attr = module_attribute(n)?;
        let target = attr.child_by_field("target")?;
        (cx.text(target) == "moduledoc").then_some(attr)
    });
    found.and_then(|attr| doc_string(attr, cx))
}

/// The string argument of a `@doc`/`@moduledoc` attribute (`~S"""` sigils included),
/// heredocs dedented.
fn doc_string(attr: Node, cx: &Cx) -> Option<String> {
    let arg = first_argument(attr)?;
    let raw = match arg.kind_str() {
        "string" => unquote(cx.text(arg)),
        "sigil" => {
            let mut c = arg.walk();
            let content = arg
                .named_children(&mut c)
                .find(|n| n.kind_str() == "quoted_content")?;
            cx.text(content)
        }
        _ => return None,
    };
    let doc = dedent(raw).trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

fn arguments(call: Node) -> Option<Node> {
    call.named_child_of_kind("arguments")
}

fn first_argument(call: Node) -> Option<Node> {
    arguments(call)?.named_child(0)
}

fn do_block(call: Node) -> Option<Node> {
    call.named_child_of_kind("do_block")
}

/// The trailing keyword list of a call (`, do: ...`, `, for: Map`).
fn keywords_argument(call: Node) -> Option<Node> {
    arguments(call)?.named_child_of_kind("keywords")
}

fn keyword_pair<'t>(call: Node<'t>, key: &str, cx: &Cx) -> Option<Node<'t>> {
    let kw = keywords_argument(call)?;
    let mut c = kw.walk();
    let found = kw.named_children(&mut c).find(|pair| {
        pair.child_by_field("key")
            .is_some_and(|k| keyword_text(cx.text(k)) == key)
    });
    found
}

/// The text of a keyword argument's value: `for: Map` -> `Map`.
fn keyword_value<'a>(call: Node, key: &str, cx: &Cx<'a>) -> Option<&'a str> {
    let value = keyword_pair(call, key, cx)?.child_by_field("value")?;
    Some(cx.text(value))
}

/// `for: ` -> `for`.
fn keyword_text(text: &str) -> &str {
    text.trim_end().trim_end_matches(':')
}

/// The name of the `defmodule` directly around a call.
fn enclosing_module<'a>(node: Node, cx: &Cx<'a>) -> Option<&'a str> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind_str() == "call"
            && n.child_by_field("target")
                .is_some_and(|t| cx.text(t) == "defmodule")
        {
            return first_argument(n).map(|a| cx.text(a));
        }
        cur = n.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::extract_on_worker;

    #[test]
    fn chained_guards_name_the_function() {
        let src = "defmodule M do\n  def f(x) when is_map(x) when x == 1 do\n    x\n  end\nend\n";
        let x = extract_on_worker("m.ex", src.into());
        let defs: Vec<&str> = x.nodes[1..]
            .iter()
            .map(|n| n.qualified_name.as_str())
            .collect();
        assert_eq!(defs, ["M", "M.f"]);
    }
}
