//! Kotlin extraction (tree-sitter-kotlin-ng): definitions, signatures, KDoc and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const CART: &str = r#"package com.example.shop

import kotlin.collections.List
import kotlinx.coroutines.*
import java.util.Date as JDate

const val MAX_ITEMS = 100
val DEFAULT_NAME = "cart"
val lowerCase = 1
typealias Items = List<String>

/** A shopping cart. */
@Serializable
data class Cart(val size: Int) : Base(size), Comparable<Cart>, Listener by relay {
    // Builds an empty cart.
    constructor(name: String) : this(name.length) {
        log("created")
    }

    @Synchronized
    override fun compareTo(other: Cart): Int {
        val local = helper.count(size)
        return Date<Int>().compare(other)
    }

    companion object Factory {
        const val VERSION = 2
        val LIMIT = 5
        fun empty(): Cart = Cart(0)
    }

    inner class Line {
        fun total() = 1
    }
}

sealed interface Event : Marker

enum class State(val label: String) : Labeled {
    OPEN("open") {
        override fun next() = CLOSED
    },
    CLOSED("closed");

    fun describe() = label
}

object Registry {
    val NAMES = listOf("a")
}

abstract class Store {
    abstract fun load(id: Int): Cart?
    companion object {
        val EMPTY = 0
    }
}

fun String.shout(): String = this.uppercase()

fun <T> List<T>.second(): T = this[1]

fun checkout(cart: Cart) {
    fun audit() = println(cart)
    val listener = object : Listener {
        override fun notify() = audit()
    }
}

annotation class Audited
"#;

fn q(name: &str) -> String {
    format!("com.example.shop.{name}")
}

#[test]
fn kotlin_definitions_kinds_names_and_lines() {
    let fx = run("src/Cart.kt", CART);
    assert!(!fx.has_errors);
    let file = "src/Cart.kt".to_string();
    let expected = vec![
        (NodeKind::Constant, q("MAX_ITEMS"), file.clone(), 7, 7),
        (NodeKind::Constant, q("DEFAULT_NAME"), file.clone(), 8, 8),
        (NodeKind::Type, q("Items"), file.clone(), 10, 10),
        (NodeKind::Class, q("Cart"), file.clone(), 14, 35),
        (NodeKind::Method, q("Cart.Cart"), q("Cart"), 16, 18),
        (NodeKind::Method, q("Cart.compareTo"), q("Cart"), 21, 24),
        (NodeKind::Class, q("Cart.Factory"), q("Cart"), 26, 30),
        (
            NodeKind::Constant,
            q("Cart.Factory.VERSION"),
            q("Cart.Factory"),
            27,
            27,
        ),
        (
            NodeKind::Constant,
            q("Cart.Factory.LIMIT"),
            q("Cart.Factory"),
            28,
            28,
        ),
        (
            NodeKind::Method,
            q("Cart.Factory.empty"),
            q("Cart.Factory"),
            29,
            29,
        ),
        (NodeKind::Class, q("Cart.Line"), q("Cart"), 32, 34),
        (
            NodeKind::Method,
            q("Cart.Line.total"),
            q("Cart.Line"),
            33,
            33,
        ),
        (NodeKind::Interface, q("Event"), file.clone(), 37, 37),
        (NodeKind::Enum, q("State"), file.clone(), 39, 46),
        (NodeKind::Method, q("State.OPEN.next"), q("State"), 41, 41),
        (NodeKind::Method, q("State.describe"), q("State"), 45, 45),
        (NodeKind::Class, q("Registry"), file.clone(), 48, 50),
        (
            NodeKind::Constant,
            q("Registry.NAMES"),
            q("Registry"),
            49,
            49,
        ),
        (NodeKind::Class, q("Store"), file.clone(), 52, 57),
        (NodeKind::Method, q("Store.load"), q("Store"), 53, 53),
        (NodeKind::Class, q("Store.Companion"), q("Store"), 54, 56),
        (
            NodeKind::Constant,
            q("Store.Companion.EMPTY"),
            q("Store.Companion"),
            55,
            55,
        ),
        // Extension functions are qualified through their receiver type.
        (NodeKind::Method, q("String.shout"), file.clone(), 59, 59),
        (NodeKind::Method, q("List.second"), file.clone(), 61, 61),
        (NodeKind::Function, q("checkout"), file.clone(), 63, 68),
        (
            NodeKind::Function,
            q("checkout.audit"),
            q("checkout"),
            64,
            64,
        ),
        // A member of an anonymous object is a method.
        (
            NodeKind::Method,
            q("checkout.notify"),
            q("checkout"),
            66,
            66,
        ),
        (NodeKind::Interface, q("Audited"), file.clone(), 70, 70),
    ];
    assert_eq!(outline_owned(&fx), expected);
    assert_eq!(node(&fx, &q("String.shout")).name, "shout");
    assert_eq!(fx.nodes[5].parent, Some(4));
}

#[test]
fn kotlin_not_definitions() {
    let fx = run("src/Cart.kt", CART);
    // Lower-case top-level vals, locals, parameters, properties of classes and enum entries.
    for name in [
        "lowerCase",
        "local",
        "listener",
        "size",
        "label",
        "OPEN",
        "CLOSED",
        "relay",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != name),
            "{name} must not be a definition"
        );
    }
}

#[test]
fn kotlin_signatures_and_docs() {
    let fx = run("src/Cart.kt", CART);
    let cart = node(&fx, &q("Cart"));
    assert_eq!(
        cart.signature.as_deref(),
        Some("@Serializable\ndata class Cart(val size: Int) : Base(size), Comparable<Cart>, Listener by relay")
    );
    assert_eq!(cart.docstring.as_deref(), Some("A shopping cart."));
    assert_eq!(
        cart.start_byte as usize,
        CART.find("@Serializable").unwrap()
    );
    let ctor = node(&fx, &q("Cart.Cart"));
    assert_eq!(
        ctor.signature.as_deref(),
        Some("constructor(name: String) : this(name.length)")
    );
    assert_eq!(ctor.docstring.as_deref(), Some("Builds an empty cart."));
    assert_eq!(
        node(&fx, &q("Cart.compareTo")).signature.as_deref(),
        Some("@Synchronized\noverride fun compareTo(other: Cart): Int")
    );
    assert_eq!(
        node(&fx, &q("Cart.Factory.empty")).signature.as_deref(),
        Some("fun empty(): Cart")
    );
    assert_eq!(
        node(&fx, &q("Store.load")).signature.as_deref(),
        Some("abstract fun load(id: Int): Cart?")
    );
    assert_eq!(
        node(&fx, &q("MAX_ITEMS")).signature.as_deref(),
        Some("const val MAX_ITEMS = 100")
    );
    assert_eq!(
        node(&fx, &q("Items")).signature.as_deref(),
        Some("typealias Items = List<String>")
    );
    assert_eq!(
        node(&fx, &q("Store.Companion")).signature.as_deref(),
        Some("companion object")
    );
    assert_eq!(
        node(&fx, &q("List.second")).signature.as_deref(),
        Some("fun <T> List<T>.second(): T")
    );
    assert_eq!(
        node(&fx, &q("State")).signature.as_deref(),
        Some("enum class State(val label: String) : Labeled")
    );
}

#[test]
fn kotlin_references() {
    let fx = run("src/Cart.kt", CART);
    let imports: Vec<(String, Option<String>, Option<String>)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.name.clone(), r.module.clone(), r.alias.clone()))
        .collect();
    assert_eq!(
        imports,
        vec![
            (
                "List".to_string(),
                Some("kotlin.collections".to_string()),
                None
            ),
            (
                "*".to_string(),
                Some("kotlinx.coroutines".to_string()),
                None
            ),
            (
                "Date".to_string(),
                Some("java.util".to_string()),
                Some("JDate".to_string())
            ),
        ]
    );
    let (cart, ctor, cmp) = (q("Cart"), q("Cart.Cart"), q("Cart.compareTo"));
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[(&cart, "Serializable", 13), (&cmp, "Synchronized", 20)])
    );
    // A supertype with a constructor call is the superclass; an interface's supertypes are
    // inherited interfaces.
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Inherits),
        owned(&[(&cart, "Base", 14), (&q("Event"), "Marker", 37)])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Implements),
        owned(&[
            (&cart, "Comparable", 14),
            (&cart, "Listener", 14),
            (&q("State"), "Labeled", 39),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[
            (&ctor, "this", 16),
            (&ctor, "log", 17),
            (&cmp, "helper.count", 22),
            (&cmp, "Date<Int>().compare", 23),
            (&cmp, "Date", 23),
            (&q("Cart.Factory.empty"), "Cart", 29),
            (&q("Registry.NAMES"), "listOf", 49),
            (&q("String.shout"), "this.uppercase", 59),
            (&q("checkout.audit"), "println", 64),
            (&q("checkout.notify"), "audit", 66),
        ])
    );
}

/// Annotations with arguments on lines of their own before a top-level declaration are
/// read by the grammar as annotated expressions; the declarations are still found.
#[test]
fn kotlin_annotations_the_grammar_reads_as_expressions() {
    let src = "package p\n\n/** Tagged. */\n@Tag(\"a\")\n@Other(\"b\")\nclass Tagged {\n    fun f() = 1\n}\n\n@Target(AnnotationTarget.CLASS)\nannotation class Marker\n\n@Tag(\"a\")\n@Other(\"b\")\nfun top() = 2\n";
    let fx = run("p/Tagged.kt", src);
    let expected = vec![
        (
            NodeKind::Class,
            "p.Tagged".to_string(),
            "p/Tagged.kt".to_string(),
            6,
            8,
        ),
        (
            NodeKind::Method,
            "p.Tagged.f".to_string(),
            "p.Tagged".to_string(),
            7,
            7,
        ),
        (
            NodeKind::Interface,
            "p.Marker".to_string(),
            "p/Tagged.kt".to_string(),
            11,
            11,
        ),
        (
            NodeKind::Function,
            "p.top".to_string(),
            "p/Tagged.kt".to_string(),
            15,
            15,
        ),
    ];
    assert_eq!(outline_owned(&fx), expected);
    let tagged = node(&fx, "p.Tagged");
    assert_eq!(
        tagged.signature.as_deref(),
        Some("@Tag(\"a\")\n@Other(\"b\")\nclass Tagged")
    );
    assert_eq!(tagged.docstring.as_deref(), Some("Tagged."));
    assert_eq!(
        node(&fx, "p.Marker").signature.as_deref(),
        Some("@Target(AnnotationTarget.CLASS)\nannotation class Marker")
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[
            ("p.Tagged", "Tag", 4),
            ("p.Tagged", "Other", 5),
            ("p.Marker", "Target", 10),
            ("p.top", "Tag", 13),
            ("p.top", "Other", 14),
        ])
    );
}

#[test]
fn kotlin_module_name_falls_back_to_directory() {
    let fx = run("app/src/Main.kt", "fun main() {\n    run()\n}\n");
    assert_eq!(fx.nodes[1].qualified_name, "app.src.main");
    assert_eq!(fx.nodes[1].kind, NodeKind::Function);
}

#[test]
fn kotlin_syntax_error_keeps_surrounding_definitions() {
    let src = "package p\n\nclass Broken {\n    fun ok() = 1\n    fun bad(x: Int): Int {\n        val y = x +\n    }\n    fun after(): Int = 1\n}\n\ninterface Later {\n    fun m()\n}\n";
    let fx = run("p/Broken.kt", src);
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
            (NodeKind::Method, "p.Broken.ok", 4),
            (NodeKind::Method, "p.Broken.bad", 5),
            (NodeKind::Method, "p.Broken.after", 8),
            (NodeKind::Interface, "p.Later", 11),
            (NodeKind::Method, "p.Later.m", 12),
        ]
    );
}

/// When recovery breaks a class header apart, the class is recovered from the error node
/// and the members parsed inside it stay qualified through it.
#[test]
fn kotlin_class_recovered_from_error_node() {
    let src = "package p\n\nclass Good {\n    fun before() = run()\n}\n\nclass Broken {\n    fun ok() = 1\n    fun bad( {\n";
    let fx = run("p/Recover.kt", src);
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
            (NodeKind::Class, "p.Good", 3),
            (NodeKind::Method, "p.Good.before", 4),
            (NodeKind::Class, "p.Broken", 7),
            (NodeKind::Method, "p.Broken.ok", 8),
        ]
    );
    assert_eq!(
        node(&fx, "p.Broken").signature.as_deref(),
        Some("class Broken")
    );
}
