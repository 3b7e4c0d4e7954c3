//! Java extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const CART: &str = r#"package com.example.shop;

import java.util.List;
import java.util.*;
import static java.util.Objects.requireNonNull;

/** A shopping cart. */
@Deprecated
@SuppressWarnings("unchecked")
public abstract class Cart<T> extends Base<T> implements Serializable, Comparable<Cart<T>> {
    /** Cart size limits. */
    public static final int MAX_ITEMS = 100, MIN_ITEMS = 1;
    private final List<T> items = new ArrayList<>();
    static int counter;

    // Builds an empty cart.
    public Cart(int size) {
        super(size);
    }

    public Cart() {
        this(MAX_ITEMS);
    }

    @Override
    public int compareTo(Cart<T> other) {
        final int local = helper.count(items);
        return Integer.compare(size(), other.size());
    }

    abstract void checkout();

    public interface Listener extends EventListener, Cloneable {
        int PRIORITY = 5;
        void onChange(Cart<?> cart);
    }

    enum State implements Labeled {
        OPEN {
            String label() { return "open"; }
        },
        CLOSED;

        String label() { return name(); }
    }

    record Line(String sku, int qty) {
        Line {
            requireNonNull(sku);
        }
    }

    @interface Audited {
        String value() default "";
    }

    void watch() {
        Runnable r = new Runnable() {
            public void run() { notifyAll(); }
        };
        class Local {}
    }
}
"#;

#[test]
fn java_definitions_kinds_names_and_lines() {
    let fx = run("src/shop/Cart.java", CART);
    assert!(!fx.has_errors);
    let cart = "com.example.shop.Cart";
    let expected = vec![
        (
            NodeKind::Class,
            cart.to_string(),
            "src/shop/Cart.java".to_string(),
            10,
            63,
        ),
        (
            NodeKind::Constant,
            format!("{cart}.MAX_ITEMS"),
            cart.to_string(),
            12,
            12,
        ),
        (
            NodeKind::Constant,
            format!("{cart}.MIN_ITEMS"),
            cart.to_string(),
            12,
            12,
        ),
        (
            NodeKind::Method,
            format!("{cart}.Cart"),
            cart.to_string(),
            17,
            19,
        ),
        (
            NodeKind::Method,
            format!("{cart}.Cart"),
            cart.to_string(),
            21,
            23,
        ),
        (
            NodeKind::Method,
            format!("{cart}.compareTo"),
            cart.to_string(),
            26,
            29,
        ),
        (
            NodeKind::Method,
            format!("{cart}.checkout"),
            cart.to_string(),
            31,
            31,
        ),
        (
            NodeKind::Interface,
            format!("{cart}.Listener"),
            cart.to_string(),
            33,
            36,
        ),
        (
            NodeKind::Constant,
            format!("{cart}.Listener.PRIORITY"),
            format!("{cart}.Listener"),
            34,
            34,
        ),
        (
            NodeKind::Method,
            format!("{cart}.Listener.onChange"),
            format!("{cart}.Listener"),
            35,
            35,
        ),
        (
            NodeKind::Enum,
            format!("{cart}.State"),
            cart.to_string(),
            38,
            45,
        ),
        (
            NodeKind::Method,
            format!("{cart}.State.OPEN.label"),
            format!("{cart}.State"),
            40,
            40,
        ),
        (
            NodeKind::Method,
            format!("{cart}.State.label"),
            format!("{cart}.State"),
            44,
            44,
        ),
        (
            NodeKind::Class,
            format!("{cart}.Line"),
            cart.to_string(),
            47,
            51,
        ),
        (
            NodeKind::Method,
            format!("{cart}.Line.Line"),
            format!("{cart}.Line"),
            48,
            50,
        ),
        (
            NodeKind::Interface,
            format!("{cart}.Audited"),
            cart.to_string(),
            53,
            55,
        ),
        (
            NodeKind::Method,
            format!("{cart}.Audited.value"),
            format!("{cart}.Audited"),
            54,
            54,
        ),
        (
            NodeKind::Method,
            format!("{cart}.watch"),
            cart.to_string(),
            57,
            62,
        ),
        (
            NodeKind::Method,
            format!("{cart}.watch.run"),
            format!("{cart}.watch"),
            59,
            59,
        ),
        (
            NodeKind::Class,
            format!("{cart}.watch.Local"),
            format!("{cart}.watch"),
            61,
            61,
        ),
    ];
    assert_eq!(outline_owned(&fx), expected);
    // Parent indexes point at the enclosing definition.
    let run_idx = fx
        .nodes
        .iter()
        .position(|n| n.qualified_name == format!("{cart}.watch.run"))
        .unwrap();
    let watch_idx = fx
        .nodes
        .iter()
        .position(|n| n.qualified_name == format!("{cart}.watch"))
        .unwrap();
    assert_eq!(fx.nodes[run_idx].parent, Some(watch_idx));
    assert_eq!(fx.nodes[1].parent, Some(0));
}

#[test]
fn java_not_definitions() {
    let fx = run("src/shop/Cart.java", CART);
    for name in [
        "items", "counter", "local", "r", "size", "OPEN", "CLOSED", "sku",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != name),
            "{name} must not be a definition"
        );
    }
}

#[test]
fn java_signatures_and_docs() {
    let fx = run("src/shop/Cart.java", CART);
    let cart = node(&fx, "com.example.shop.Cart");
    assert_eq!(
        cart.signature.as_deref(),
        Some("@Deprecated\n@SuppressWarnings(\"unchecked\")\npublic abstract class Cart<T> extends Base<T> implements Serializable, Comparable<Cart<T>>")
    );
    assert_eq!(cart.docstring.as_deref(), Some("A shopping cart."));
    // The definition starts at its first annotation.
    assert_eq!(cart.start_byte as usize, CART.find("@Deprecated").unwrap());

    let max = node(&fx, "com.example.shop.Cart.MAX_ITEMS");
    assert_eq!(
        max.signature.as_deref(),
        Some("public static final int MAX_ITEMS = 100, MIN_ITEMS = 1;")
    );
    assert_eq!(max.docstring.as_deref(), Some("Cart size limits."));
    assert_eq!(
        node(&fx, "com.example.shop.Cart.MIN_ITEMS")
            .docstring
            .as_deref(),
        Some("Cart size limits.")
    );

    let ctor = &fx.nodes[4];
    assert_eq!(ctor.signature.as_deref(), Some("public Cart(int size)"));
    assert_eq!(ctor.docstring.as_deref(), Some("Builds an empty cart."));
    assert_eq!(fx.nodes[5].docstring, None);

    assert_eq!(
        node(&fx, "com.example.shop.Cart.compareTo")
            .signature
            .as_deref(),
        Some("@Override\npublic int compareTo(Cart<T> other)")
    );
    assert_eq!(
        node(&fx, "com.example.shop.Cart.checkout")
            .signature
            .as_deref(),
        Some("abstract void checkout();")
    );
    assert_eq!(
        node(&fx, "com.example.shop.Cart.Listener")
            .signature
            .as_deref(),
        Some("public interface Listener extends EventListener, Cloneable")
    );
    assert_eq!(
        node(&fx, "com.example.shop.Cart.Listener.onChange")
            .signature
            .as_deref(),
        Some("void onChange(Cart<?> cart);")
    );
    assert_eq!(
        node(&fx, "com.example.shop.Cart.Line").signature.as_deref(),
        Some("record Line(String sku, int qty)")
    );
    assert_eq!(
        node(&fx, "com.example.shop.Cart.Audited")
            .signature
            .as_deref(),
        Some("@interface Audited")
    );
}

#[test]
fn java_references() {
    let fx = run("src/shop/Cart.java", CART);
    let c = "com.example.shop.Cart";
    let imports: Vec<(String, Option<String>, Option<String>)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.name.clone(), r.module.clone(), r.alias.clone()))
        .collect();
    assert_eq!(
        imports,
        vec![
            ("List".to_string(), Some("java.util".to_string()), None),
            ("*".to_string(), Some("java.util".to_string()), None),
            (
                "requireNonNull".to_string(),
                Some("java.util.Objects".to_string()),
                None
            ),
        ]
    );
    assert!(fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .all(|r| r.node == 0));

    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[
            (c, "Deprecated", 8),
            (c, "SuppressWarnings", 9),
            (&format!("{c}.compareTo"), "Override", 25),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Inherits),
        owned(&[
            (c, "Base", 10),
            (&format!("{c}.Listener"), "EventListener", 33),
            (&format!("{c}.Listener"), "Cloneable", 33),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Implements),
        owned(&[
            (c, "Serializable", 10),
            (c, "Comparable", 10),
            (&format!("{c}.State"), "Labeled", 38),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[
            (c, "ArrayList", 13),
            (&format!("{c}.Cart"), "super", 18),
            (&format!("{c}.Cart"), "this", 22),
            (&format!("{c}.compareTo"), "helper.count", 27),
            (&format!("{c}.compareTo"), "Integer.compare", 28),
            (&format!("{c}.compareTo"), "size", 28),
            (&format!("{c}.compareTo"), "other.size", 28),
            (&format!("{c}.State.label"), "name", 44),
            (&format!("{c}.Line.Line"), "requireNonNull", 49),
            (&format!("{c}.watch"), "Runnable", 58),
            (&format!("{c}.watch.run"), "notifyAll", 59),
        ])
    );
}

#[test]
fn java_generic_constructor_call_and_annotated_constant() {
    let src = "class A {\n    @Native\n    static final String NAME = \"a\";\n    Object make() { return new java.util.HashMap<String, Integer>(); }\n}\n";
    let fx = run("A.java", src);
    let name = node(&fx, "A.NAME");
    assert_eq!(name.kind, NodeKind::Constant);
    assert_eq!(name.start_line, 3);
    assert_eq!(
        name.signature.as_deref(),
        Some("@Native\nstatic final String NAME = \"a\";")
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[("A.NAME", "Native", 2)])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("A.make", "java.util.HashMap", 4)])
    );
}

#[test]
fn java_module_name_falls_back_to_directory() {
    let fx = run("src/util/Strings.java", "class Strings { void f() {} }\n");
    assert_eq!(fx.nodes[1].qualified_name, "src.util.Strings");
    assert_eq!(fx.nodes[2].qualified_name, "src.util.Strings.f");
    let fx = run("Main.java", "class Main {}\n");
    assert_eq!(fx.nodes[1].qualified_name, "Main");
}

#[test]
fn java_syntax_error_keeps_surrounding_definitions() {
    let src = "class Before {\n    void ok() {}\n}\n\nclass Broken {\n    void fine() { go(); }\n    void bad( { int x = ; }\n    int after() { return 1; }\n}\n\ninterface After { void m(); }\n";
    let fx = run("Broken.java", src);
    assert!(fx.has_errors);
    let names: Vec<(NodeKind, &str, u32)> = fx
        .nodes
        .iter()
        .skip(1)
        .map(|n| (n.kind, n.qualified_name.as_str(), n.start_line))
        .collect();
    assert_eq!(
        names,
        vec![
            (NodeKind::Class, "Before", 1),
            (NodeKind::Method, "Before.ok", 2),
            (NodeKind::Class, "Broken", 5),
            (NodeKind::Method, "Broken.fine", 6),
            (NodeKind::Method, "Broken.bad", 7),
            (NodeKind::Method, "Broken.after", 8),
            (NodeKind::Interface, "After", 11),
            (NodeKind::Method, "After.m", 11),
        ]
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("Broken.fine", "go", 6)])
    );
}

/// A file cut off mid-class: the parser leaves the class header in an error node, the
/// class is recovered from it and the methods parsed inside stay qualified through it.
#[test]
fn java_class_recovered_from_error_node() {
    let src = "package p;\n\npublic class Broken extends Base {\n    void ok() { go(); }\n    void bad( {\n";
    let fx = run("p/Broken.java", src);
    assert!(fx.has_errors);
    let names: Vec<(NodeKind, &str, u32)> = fx
        .nodes
        .iter()
        .skip(1)
        .map(|n| (n.kind, n.qualified_name.as_str(), n.start_line))
        .collect();
    assert_eq!(
        names,
        vec![
            (NodeKind::Class, "p.Broken", 3),
            (NodeKind::Method, "p.Broken.ok", 4)
        ]
    );
    assert_eq!(
        node(&fx, "p.Broken").signature.as_deref(),
        Some("public class Broken extends Base")
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("p.Broken.ok", "go", 4)])
    );
}
