//! Scala extraction: definitions, packages, signatures, Scaladoc and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const CART: &str = r#"package com.example
package shop

import scala.collection.mutable
import java.util.{List, Map => JMap, Date as JDate}
import scala.concurrent._
import cats.syntax.all.*

/** A shopping cart. */
@deprecated("use Basket", "2.0")
@SerialVersionUID(1L)
case class Cart[T](size: Int) extends Base[T](size) with Serializable with Ordered[Cart[T]] {
  final val Limit = 3
  val lowerCase = 1
  private var count = 0

  // Compares two carts.
  @inline
  override def compare(other: Cart[T]): Int = {
    val local = helper.count(size)
    println(local)
    new Date(1L).compareTo(other.created)
  }

  def total: Int

  type Items = List[T]

  class Line(sku: String) {
    def qty(): Int = 1
  }
}

trait Listener extends Observer with Cloneable {
  def onChange(cart: Cart[_]): Unit
  def name: String = "listener"
}

object Cart {
  val MAX_ITEMS = 100
  val defaultName = "cart"
  def empty[T]: Cart[T] = new Cart[T](0)
}

enum State(val label: String) {
  case Open extends State("open")
  case Closed extends State("closed")
  def describe: String = label
}

package internal {
  class Audit {
    def run(): Unit = {
      def step(): Int = 1
      step()
    }
  }
}

extension (s: String)
  def shout: String = s.toUpperCase

def topLevel(x: Int): Int = x + 1
"#;

fn q(name: &str) -> String {
    format!("com.example.shop.{name}")
}

#[test]
fn scala_definitions_kinds_names_and_lines() {
    let fx = run("src/Cart.scala", CART);
    assert!(!fx.has_errors);
    let file = "src/Cart.scala".to_string();
    let expected = vec![
        (NodeKind::Class, q("Cart"), file.clone(), 12, 32),
        (NodeKind::Constant, q("Cart.Limit"), q("Cart"), 13, 13),
        (NodeKind::Method, q("Cart.compare"), q("Cart"), 19, 23),
        (NodeKind::Method, q("Cart.total"), q("Cart"), 25, 25),
        (NodeKind::Type, q("Cart.Items"), q("Cart"), 27, 27),
        (NodeKind::Class, q("Cart.Line"), q("Cart"), 29, 31),
        (NodeKind::Method, q("Cart.Line.qty"), q("Cart.Line"), 30, 30),
        (NodeKind::Interface, q("Listener"), file.clone(), 34, 37),
        (
            NodeKind::Method,
            q("Listener.onChange"),
            q("Listener"),
            35,
            35,
        ),
        (NodeKind::Method, q("Listener.name"), q("Listener"), 36, 36),
        // The companion object shares its class's name.
        (NodeKind::Class, q("Cart"), file.clone(), 39, 43),
        (NodeKind::Constant, q("Cart.MAX_ITEMS"), q("Cart"), 40, 40),
        (NodeKind::Method, q("Cart.empty"), q("Cart"), 42, 42),
        (NodeKind::Enum, q("State"), file.clone(), 45, 49),
        (NodeKind::Method, q("State.describe"), q("State"), 48, 48),
        (NodeKind::Module, q("internal"), file.clone(), 51, 58),
        (NodeKind::Class, q("internal.Audit"), q("internal"), 52, 57),
        (
            NodeKind::Method,
            q("internal.Audit.run"),
            q("internal.Audit"),
            53,
            56,
        ),
        (
            NodeKind::Function,
            q("internal.Audit.run.step"),
            q("internal.Audit.run"),
            54,
            54,
        ),
        // Extension methods are qualified through the extended type.
        (NodeKind::Method, q("String.shout"), file.clone(), 61, 61),
        (NodeKind::Function, q("topLevel"), file.clone(), 63, 63),
    ];
    assert_eq!(outline_owned(&fx), expected);
    assert_eq!(fx.nodes[13].parent, Some(11));
    assert_eq!(fx.nodes[19].parent, Some(18));
}

#[test]
fn scala_not_definitions() {
    let fx = run("src/Cart.scala", CART);
    // Lower-case vals, vars, locals, class parameters and enum cases.
    for name in [
        "lowerCase",
        "count",
        "defaultName",
        "local",
        "size",
        "Open",
        "Closed",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != name),
            "{name} must not be a definition"
        );
    }
}

#[test]
fn scala_signatures_and_docs() {
    let fx = run("src/Cart.scala", CART);
    let cart = &fx.nodes[1];
    assert_eq!(
        cart.signature.as_deref(),
        Some("@deprecated(\"use Basket\", \"2.0\")\n@SerialVersionUID(1L)\ncase class Cart[T](size: Int) extends Base[T](size) with Serializable with Ordered[Cart[T]]")
    );
    assert_eq!(cart.docstring.as_deref(), Some("A shopping cart."));
    assert_eq!(cart.start_byte as usize, CART.find("@deprecated").unwrap());
    let compare = node(&fx, &q("Cart.compare"));
    assert_eq!(
        compare.signature.as_deref(),
        Some("@inline\noverride def compare(other: Cart[T]): Int")
    );
    assert_eq!(compare.docstring.as_deref(), Some("Compares two carts."));
    assert_eq!(
        node(&fx, &q("Cart.total")).signature.as_deref(),
        Some("def total: Int")
    );
    assert_eq!(
        node(&fx, &q("Cart.Limit")).signature.as_deref(),
        Some("final val Limit = 3")
    );
    assert_eq!(
        node(&fx, &q("Cart.Items")).signature.as_deref(),
        Some("type Items = List[T]")
    );
    assert_eq!(
        node(&fx, &q("Cart.empty")).signature.as_deref(),
        Some("def empty[T]: Cart[T]")
    );
    assert_eq!(
        node(&fx, &q("Listener")).signature.as_deref(),
        Some("trait Listener extends Observer with Cloneable")
    );
    assert_eq!(
        node(&fx, &q("internal")).signature.as_deref(),
        Some("package internal")
    );
    assert_eq!(
        node(&fx, &q("String.shout")).signature.as_deref(),
        Some("def shout: String")
    );
}

#[test]
fn scala_references() {
    let fx = run("src/Cart.scala", CART);
    let imports: Vec<(String, Option<String>, Option<String>)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.name.clone(), r.module.clone(), r.alias.clone()))
        .collect();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        imports,
        vec![
            ("mutable".to_string(), s("scala.collection"), None),
            ("List".to_string(), s("java.util"), None),
            ("Map".to_string(), s("java.util"), s("JMap")),
            ("Date".to_string(), s("java.util"), s("JDate")),
            ("*".to_string(), s("scala.concurrent"), None),
            ("*".to_string(), s("cats.syntax.all"), None),
        ]
    );
    let (cart, compare) = (q("Cart"), q("Cart.compare"));
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[
            (&cart, "deprecated", 10),
            (&cart, "SerialVersionUID", 11),
            (&compare, "inline", 18),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Inherits),
        owned(&[(&cart, "Base", 12), (&q("Listener"), "Observer", 34)])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Implements),
        owned(&[
            (&cart, "Serializable", 12),
            (&cart, "Ordered", 12),
            (&q("Listener"), "Cloneable", 34),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[
            (&compare, "helper.count", 20),
            (&compare, "println", 21),
            (&compare, "new Date(1L).compareTo", 22),
            (&compare, "Date", 22),
            (&q("Cart.empty"), "Cart", 42),
            (&q("internal.Audit.run"), "step", 55),
        ])
    );
}

#[test]
fn scala_indentation_syntax_package_objects_and_anonymous_classes() {
    let src = "package object util {\n  val VERSION = \"1\"\n}\n\nclass Service(dep: Dep) extends Base, Logging:\n  def start(): Unit =\n    dep.init()\n  end start\n\nobject Main extends App {\n  val service = new Service(dep) with Extra { def y = 1 }\n}\n";
    let fx = run("Service.scala", src);
    let expected = vec![
        (
            NodeKind::Module,
            "util".to_string(),
            "Service.scala".to_string(),
            1,
            3,
        ),
        (
            NodeKind::Constant,
            "util.VERSION".to_string(),
            "util".to_string(),
            2,
            2,
        ),
        // The grammar ends an indented template after the blank line that follows it.
        (
            NodeKind::Class,
            "Service".to_string(),
            "Service.scala".to_string(),
            5,
            9,
        ),
        (
            NodeKind::Method,
            "Service.start".to_string(),
            "Service".to_string(),
            6,
            8,
        ),
        (
            NodeKind::Class,
            "Main".to_string(),
            "Service.scala".to_string(),
            10,
            12,
        ),
        (
            NodeKind::Method,
            "Main.y".to_string(),
            "Main".to_string(),
            11,
            11,
        ),
    ];
    assert_eq!(outline_owned(&fx), expected);
    assert_eq!(
        node(&fx, "Service").signature.as_deref(),
        Some("class Service(dep: Dep) extends Base, Logging")
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Inherits),
        owned(&[("Service", "Base", 5), ("Main", "App", 10)])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Implements),
        owned(&[("Service", "Logging", 5)])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("Service.start", "dep.init", 7), ("Main", "Service", 11)])
    );
}

#[test]
fn scala_module_name_rules() {
    // No package clause: the directory.
    let fx = run("src/main/scala/App.scala", "object App\n");
    assert_eq!(fx.nodes[1].qualified_name, "src.main.scala.App");
    // Only packages with bodies: they are modules, the file adds no prefix.
    let fx = run("src/Pkg.scala", "package a.b {\n  class C\n}\n");
    assert_eq!(fx.nodes[1].kind, NodeKind::Module);
    assert_eq!(fx.nodes[1].qualified_name, "a.b");
    assert_eq!(fx.nodes[2].qualified_name, "a.b.C");
}

#[test]
fn scala_syntax_error_keeps_surrounding_definitions() {
    let src = "package p\n\nclass Good {\n  def before(): Unit = run()\n}\n\nclass Broken {\n  def ok = 1\n  def bad( = {\n    val x =\n  }\n  def after: Int = 1\n}\n\ntrait Later:\n  def m(): Int\n";
    let fx = run("p/Broken.scala", src);
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
            (NodeKind::Method, "p.Broken.bad", 9),
            (NodeKind::Method, "p.Broken.after", 12),
            (NodeKind::Interface, "p.Later", 15),
            (NodeKind::Method, "p.Later.m", 16),
        ]
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("p.Good.before", "run", 4)])
    );
}
