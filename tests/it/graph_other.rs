//! Call graphs of the languages resolved by the shared chain alone (Ruby, PHP, Lua, Bash):
//! same-file functions, `self`/`$this` members, bases, PHP `use` imports, Lua module tables,
//! and built-in commands or functions counted as external.

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
