//! Call graphs of the languages resolved by the shared chain alone (Ruby, PHP, Lua, Bash):
//! same-file functions, `self`/`$this` members, bases, PHP `use` imports, Lua module tables,
//! and built-in commands or functions counted as external. Also the calls through the base
//! (Ruby's `super`, PHP's `parent::`, Swift's and Scala's `super.`) of those and of the
//! languages without a file of their own here (Swift, Scala).

use crate::common::graph::graph;

const RUBY: &str = r#"module Shop
  class Base
    def save
      validate
    end

    def validate
      true
    end
  end

  class Order < Base
    def place
      save
      self.notify
      helper(1)
      puts "done"
    end

    def notify
    end
  end
end

def helper(x)
  x
end
"#;

const CART: &str = r#"<?php
namespace App\Shop;

use App\Util\Money;

class Cart extends BaseCart {
    public function total() {
        $m = new Money();
        $this->recalc();
        return format_total($m);
    }
    private function recalc() {}
}

function format_total($m) { return strlen("x"); }
"#;

const MONEY: &str = r#"<?php
namespace App\Util;

class Money {
    public function add() {}
}
"#;

const LUA: &str = r#"local M = {}

function M.greet(name)
  return M.format(name)
end

function M.format(name)
  return string.upper(name)
end

local function helper()
  return M.greet("x")
end

return M
"#;

const SHELL: &str = r#"#!/bin/bash
greet() {
  echo "hi $1"
}
main() {
  greet "$@"
  ls -la
}
main "$@"
"#;

fn fixture() -> crate::common::graph::Graph {
    graph(&[
        ("lib/greeter.rb", RUBY),
        ("src/Cart.php", CART),
        ("src/Money.php", MONEY),
        ("src/util.lua", LUA),
        ("src/run.sh", SHELL),
    ])
}

#[test]
fn ruby_members_bases_and_builtins() {
    let g = fixture();
    g.edge("Shop.Order", "inherits", "Shop.Base");
    assert_eq!(
        g.edge("Shop.Order.place", "calls", "Shop.Order.notify")
            .strategy,
        "self"
    );
    assert_eq!(
        g.edge("Shop.Order.place", "calls", "helper").strategy,
        "same_file"
    );
    assert_eq!(g.miss("Shop.Order.place", "puts").reason, "external");
}

#[test]
fn php_use_imports_this_members_and_namespace_functions() {
    let g = fixture();
    let e = g.edge("App.Shop.Cart.total", "calls", "App.Util.Money");
    assert_eq!(e.strategy, "import");
    g.edge("src/Cart.php", "imports", "App.Util.Money");
    assert_eq!(
        g.edge("App.Shop.Cart.total", "calls", "App.Shop.Cart.recalc")
            .strategy,
        "self"
    );
    g.edge("App.Shop.Cart.total", "calls", "App.Shop.format_total");
    assert_eq!(g.miss("App.Shop.format_total", "strlen").reason, "external");
    assert_eq!(g.miss("App.Shop.Cart", "BaseCart").reason, "external");
    g.no_edge("App.Shop.Cart.total", "calls", "App.Util.Money.add");
}

#[test]
fn lua_module_tables_and_local_functions() {
    let g = fixture();
    assert_eq!(
        g.edge("util.M.greet", "calls", "util.M.format").strategy,
        "same_file"
    );
    g.edge("util.helper", "calls", "util.M.greet");
    assert_eq!(g.miss("util.M.format", "string.upper").reason, "external");
}

#[test]
fn shell_functions_and_commands() {
    let g = fixture();
    g.edge("src.run.main", "calls", "src.run.greet");
    g.edge("src/run.sh", "calls", "src.run.main");
    assert_eq!(g.miss("src.run.main", "ls").reason, "external");
    g.no_edge("src.run.greet", "calls", "src.run.main");
}

const RUBY_CHAIN: &str = r#"class Base
  def initialize(name)
    @name = name
  end

  def save
    true
  end

  def to_h
    {}
  end
end

class Mid < Base
end

class Child < Mid
  def initialize(name)
    super(name)
  end

  def save
    items.each { super }
  end

  def to_h
    super.merge(kind: "child")
  end
end

class Bare
end

class Kid < Bare
  def initialize
    super()
  end

  def save
    super
  end
end
"#;

#[test]
fn ruby_super_calls_the_same_named_method_of_the_superclass() {
    let g = graph(&[("lib/chain.rb", RUBY_CHAIN)]);
    // `super(...)`, a bare `super` (in a block too) and `super` as a receiver all call the
    // method named like the enclosing one, inherited through `Mid`; never the class.
    for (method, base) in [
        ("Child.initialize", "Base.initialize"),
        ("Child.save", "Base.save"),
        ("Child.to_h", "Base.to_h"),
    ] {
        let e = g.edge(method, "calls", base);
        assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
        g.no_edge(method, "calls", "Base");
        g.no_edge(method, "calls", "Mid");
    }
    // `merge` is called on what `super` returns, not looked up in the superclass.
    assert_eq!(g.targets("Child.to_h", "calls"), ["Base.to_h"]);
    // A superclass without the method: unresolved, kept under the name it needs.
    for kid in ["Kid.initialize", "Kid.save"] {
        assert!(
            g.targets(kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
        assert_eq!(g.miss(kid, "super").reason, "not_found");
    }
}

const PHP_CHAIN: &str = r#"<?php
namespace App\Chain;

class Base {
    public function __construct($name) {}
    public function save() {}
}

class Mid extends Base {}

class Child extends Mid {
    public function __construct($name) { parent::__construct($name); }
    public function save() { return parent::save(); }
}

class Bare {}

class Kid extends Bare {
    public function __construct() { parent::__construct(); }
    public function save() { return parent::save(); }
}
"#;

#[test]
fn php_parent_calls_land_on_the_method_of_the_base() {
    let g = graph(&[("src/Chain.php", PHP_CHAIN)]);
    let c = "App.Chain";
    for (method, base) in [
        ("Child.__construct", "Base.__construct"),
        ("Child.save", "Base.save"),
    ] {
        let method = format!("{c}.{method}");
        let e = g.edge(&method, "calls", &format!("{c}.{base}"));
        assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
        g.no_edge(&method, "calls", &format!("{c}.Base"));
    }
    for kid in ["Kid.__construct", "Kid.save"] {
        let kid = format!("{c}.{kid}");
        assert!(
            g.targets(&kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
        g.no_edge(&kid, "calls", &format!("{c}.Bare"));
    }
}

const SWIFT_CHAIN: &str = r#"class Base {
    init(name: String) {}

    func save() {}
}

class Mid: Base {}

class Child: Mid {
    init() {
        super.init(name: "child")
    }

    override func save() {
        super.save()
    }
}

class Bare {}

class Kid: Bare {
    override init() {
        super.init()
    }

    func save() {
        super.save()
    }
}
"#;

#[test]
fn swift_super_calls_land_on_the_initializer_and_method_of_the_base() {
    let g = graph(&[("Sources/Chain/Chain.swift", SWIFT_CHAIN)]);
    let c = "Chain.Chain";
    for (method, base) in [("Child.init", "Base.init"), ("Child.save", "Base.save")] {
        let method = format!("{c}.{method}");
        let e = g.edge(&method, "calls", &format!("{c}.{base}"));
        assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
        g.no_edge(&method, "calls", &format!("{c}.Base"));
    }
    for kid in ["Kid.init", "Kid.save"] {
        let kid = format!("{c}.{kid}");
        assert!(
            g.targets(&kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
        g.no_edge(&kid, "calls", &format!("{c}.Bare"));
    }
}

const SCALA_CHAIN: &str = r#"package acme.chain

trait Saver {
  def save(): Unit = {}
}

class Base(size: Int) {
  def save(): Unit = {}
}

class Mid(size: Int) extends Base(size)

class Child extends Mid(1) with Saver {
  override def save(): Unit = {
    super[Saver].save()
    super[Mid].save()
  }
}

class Leaf extends Mid(2) {
  override def save(): Unit = super.save()
}

class Bare

class Kid extends Bare {
  def save(): Unit = super.save()
}
"#;

#[test]
fn scala_super_calls_land_on_the_method_of_the_base() {
    let g = graph(&[("src/main/scala/acme/chain/Chain.scala", SCALA_CHAIN)]);
    let c = "acme.chain";
    // `super[T].save()` is `T`'s, declared or inherited.
    let save = format!("{c}.Child.save");
    let lines = |target: &str| -> Vec<i64> {
        g.find(&save, "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    assert_eq!(lines(&format!("{c}.Saver.save")), [15]);
    assert_eq!(lines(&format!("{c}.Base.save")), [16]);
    assert_eq!(g.targets(&save, "calls").len(), 2, "{}", g.describe());
    // `super.save()` is inherited through `Mid`.
    let e = g.edge(
        &format!("{c}.Leaf.save"),
        "calls",
        &format!("{c}.Base.save"),
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    let kid = format!("{c}.Kid.save");
    assert!(g.targets(&kid, "calls").is_empty(), "{}", g.describe());
    g.no_edge(&kid, "calls", &format!("{c}.Bare"));
}
