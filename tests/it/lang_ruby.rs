//! Ruby extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const PATH: &str = "lib/shop/cart.rb";

const CART: &str = r#"require 'json'
require_relative "pricing/rules"

# Shopping domain.
module Shop
  VERSION = "1.2"

  # A cart of items.
  # Holds line items.
  class Billing::Cart < Base::Model
    include Enumerable
    extend Forwardable, Shop::Helpers
    MAX_ITEMS = 50

    def initialize(items)
      super(items)
      @items = normalize(items)
      total = @items.sum
      Logger.info("created")
      @items.each { |i| i.validate! }
    end

    # Builds a cart.
    def self.build(*args) = new(*args)

    class << self
      def empty
      end
    end

    def size; @items.size; end
  end

  def self.version
    VERSION
  end

  def helper(x)
    def inner; end
  end
end

def top_level
  Shop::Billing::Cart.build
end
"#;

#[test]
fn definitions_with_qualified_names_parents_and_lines() {
    let fx = run(PATH, CART);
    assert!(!fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "Shop", 0, 5, 41),
            (Constant, "Shop.VERSION", 1, 6, 6),
            // `class Billing::Cart` is named `Cart`, qualified by the dotted path.
            (Class, "Shop.Billing.Cart", 1, 10, 32),
            (Constant, "Shop.Billing.Cart.MAX_ITEMS", 3, 13, 13),
            (Method, "Shop.Billing.Cart.initialize", 3, 15, 21),
            (Method, "Shop.Billing.Cart.build", 3, 24, 24),
            // `class << self` is transparent.
            (Method, "Shop.Billing.Cart.empty", 3, 27, 28),
            (Method, "Shop.Billing.Cart.size", 3, 31, 31),
            (Method, "Shop.version", 1, 34, 36),
            (Method, "Shop.helper", 1, 38, 40),
            (Function, "Shop.helper.inner", 10, 39, 39),
            (Function, "top_level", 0, 43, 45),
        ]
    );
    let cart = node(&fx, "Shop.Billing.Cart");
    assert_eq!(cart.name, "Cart");
}

#[test]
fn locals_and_calls_are_not_definitions() {
    let fx = run(PATH, CART);
    for absent in [
        "total",
        "items",
        "@items",
        "normalize",
        "Logger",
        "self",
        "Enumerable",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn signatures_and_docs() {
    let fx = run(PATH, CART);
    let sig = |q: &str| node(&fx, q).signature.clone().unwrap_or_default();
    assert_eq!(sig("Shop"), "module Shop");
    assert_eq!(
        sig("Shop.Billing.Cart"),
        "class Billing::Cart < Base::Model"
    );
    assert_eq!(sig("Shop.Billing.Cart.initialize"), "def initialize(items)");
    assert_eq!(sig("Shop.Billing.Cart.empty"), "def empty");
    assert_eq!(sig("Shop.version"), "def self.version");
    assert_eq!(sig("Shop.VERSION"), "VERSION = \"1.2\"");
    // An endless method has no body block: it is its own signature.
    assert_eq!(
        sig("Shop.Billing.Cart.build"),
        "def self.build(*args) = new(*args)"
    );
    let doc = |q: &str| node(&fx, q).docstring.clone();
    assert_eq!(doc("Shop").as_deref(), Some("Shopping domain."));
    assert_eq!(
        doc("Shop.Billing.Cart").as_deref(),
        Some("A cart of items.\nHolds line items.")
    );
    assert_eq!(
        doc("Shop.Billing.Cart.build").as_deref(),
        Some("Builds a cart.")
    );
    assert_eq!(doc("Shop.Billing.Cart.initialize"), None);
}

#[test]
fn references_of_every_kind() {
    let fx = run(PATH, CART);
    let imports: Vec<(&str, &str, u32)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.module.as_deref().unwrap_or(""), r.name.as_str(), r.line))
        .collect();
    assert_eq!(imports, vec![("json", "", 1), ("pricing/rules", "", 2)]);
    assert_eq!(
        kind_refs(&fx, RefKind::Inherits),
        vec![(3, "Base.Model", 10)]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Implements),
        vec![
            (3, "Enumerable", 11),
            (3, "Forwardable", 12),
            (3, "Shop.Helpers", 12)
        ]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Call),
        vec![
            (5, "super", 16),
            (5, "normalize", 17),
            (5, "@items.sum", 18),
            (5, "Logger.info", 19),
            (5, "@items.each", 20),
            (5, "i.validate!", 20),
            (6, "new", 24),
            (8, "@items.size", 31),
            (12, "Shop.Billing.Cart.build", 44),
        ]
    );
    assert!(kind_refs(&fx, RefKind::Decorator).is_empty());
}

#[test]
fn module_methods_and_constant_paths() {
    let src =
        "module Util\n  def self.a; end\n  def b\n  end\nend\nFoo::LIMIT = 3\ndef Util.c; end\n";
    let fx = run("util.rb", src);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "Util", 0, 1, 5),
            (Method, "Util.a", 1, 2, 2),
            (Method, "Util.b", 1, 3, 4),
            (Constant, "Foo.LIMIT", 0, 6, 6),
            (Method, "Util.c", 0, 7, 7),
        ]
    );
}

#[test]
fn syntax_errors_keep_surrounding_definitions() {
    let src = "class Broken < Base\n  def ok\n  end\n\n  def bad\n    foo(:a => )\n  end\n\n  def after\n  end\nend\n";
    let fx = run("broken.rb", src);
    assert!(fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Class, "Broken", 0, 1, 11),
            (Method, "Broken.ok", 1, 2, 3),
            (Method, "Broken.bad", 1, 5, 7),
            (Method, "Broken.after", 1, 9, 10),
        ]
    );
}
