//! Lua extraction: functions, methods, assigned functions, docs, calls and requires.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const UTIL: &str = r#"local json = require("dkjson")
local log = require "myplugin.log"
require('myplugin.setup')

local M = {}

--- Adds two numbers.
-- @param a number
function M.add(a, b)
  return log.wrap(a + b)
end

-- Greets through the object.
function M:greet(name)
  self:say("hi " .. name)
  print(name)
end

local function helper(x)
  local function inner() return x end
  return inner()
end

function configure(opts) end

M.on_event = function(ev)
  return json.encode(ev)
end

--- Renders nothing.
local render = function() end
fallback = function() end

function M.sub.deep(x) end

local count, total = 0, 10

return M
"#;

#[test]
fn lua_definitions_kinds_names_and_lines() {
    let ex = run("lua/myplugin/util.lua", UTIL);
    assert!(!ex.has_errors);
    use NodeKind::*;
    let f = "lua/myplugin/util.lua";
    assert_eq!(
        outline(&ex),
        vec![
            // `M.f` and `M:m` are qualified by their table (and so become methods).
            (Method, "myplugin.util.M.add", f, 9, 11),
            (Method, "myplugin.util.M.greet", f, 14, 17),
            (Function, "myplugin.util.helper", f, 19, 22),
            (
                Function,
                "myplugin.util.helper.inner",
                "myplugin.util.helper",
                20,
                20
            ),
            (Function, "myplugin.util.configure", f, 24, 24),
            (Method, "myplugin.util.M.on_event", f, 26, 28),
            (Function, "myplugin.util.render", f, 31, 31),
            (Function, "myplugin.util.fallback", f, 32, 32),
            (Method, "myplugin.util.M.sub.deep", f, 34, 34),
        ]
    );
    // Not definitions: tables and plain values, required modules, calls.
    for absent in ["M", "count", "total", "json", "print", "say"] {
        assert!(
            ex.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn lua_signatures_and_docs() {
    let ex = run("lua/myplugin/util.lua", UTIL);
    let sig = |q: &str| unique_node(&ex, q).signature.clone().unwrap();
    let doc = |q: &str| unique_node(&ex, q).docstring.clone();
    assert_eq!(sig("myplugin.util.M.add"), "function M.add(a, b)");
    assert_eq!(sig("myplugin.util.M.greet"), "function M:greet(name)");
    assert_eq!(sig("myplugin.util.helper"), "local function helper(x)");
    // An empty function stops before its `end`.
    assert_eq!(sig("myplugin.util.configure"), "function configure(opts)");
    assert_eq!(sig("myplugin.util.M.on_event"), "M.on_event = function(ev)");
    assert_eq!(sig("myplugin.util.render"), "local render = function()");
    assert_eq!(sig("myplugin.util.fallback"), "fallback = function()");
    assert_eq!(
        doc("myplugin.util.M.add").as_deref(),
        Some("Adds two numbers.\n@param a number")
    );
    assert_eq!(
        doc("myplugin.util.M.greet").as_deref(),
        Some("Greets through the object.")
    );
    // The `local` statement is the definition, so the comment above it is its doc.
    assert_eq!(
        doc("myplugin.util.render").as_deref(),
        Some("Renders nothing.")
    );
    assert_eq!(doc("myplugin.util.helper"), None);
    let render = unique_node(&ex, "myplugin.util.render");
    assert!(UTIL[render.start_byte as usize..].starts_with("local render = function() end"));
}

#[test]
fn lua_references() {
    let ex = run("lua/myplugin/util.lua", UTIL);
    use RefKind::*;
    let f = "lua/myplugin/util.lua";
    assert_eq!(
        refs(&ex),
        vec![
            // The local a module is bound to is its alias.
            (f, Import, "", Some("dkjson"), Some("json"), 1),
            (f, Import, "", Some("myplugin.log"), Some("log"), 2),
            (f, Import, "", Some("myplugin.setup"), None, 3),
            ("myplugin.util.M.add", Call, "log.wrap", None, None, 10),
            ("myplugin.util.M.greet", Call, "self:say", None, None, 15),
            ("myplugin.util.M.greet", Call, "print", None, None, 16),
            ("myplugin.util.helper", Call, "inner", None, None, 21),
            (
                "myplugin.util.M.on_event",
                Call,
                "json.encode",
                None,
                None,
                27
            ),
        ]
    );
}

#[test]
fn lua_dynamic_require_is_a_call() {
    let ex = run("src/x.lua", "local m = require(prefix .. \".mod\")\n");
    let found: Vec<_> = ex
        .refs
        .iter()
        .map(|r| (r.kind, r.name.as_str(), r.module.as_deref()))
        .collect();
    assert_eq!(found, vec![(RefKind::Call, "require", None)]);
}

#[test]
fn lua_module_names_follow_the_path() {
    let src = "function f() end\n";
    let q = |path: &str| run(path, src).nodes[1].qualified_name.clone();
    assert_eq!(q("lua/myplugin/util.lua"), "myplugin.util.f");
    assert_eq!(q("lua/myplugin/init.lua"), "myplugin.f");
    assert_eq!(q("src/app/main.lua"), "app.main.f");
    assert_eq!(q("scripts/build.lua"), "scripts.build.f");
}

#[test]
fn lua_syntax_errors_keep_the_definitions_around_them() {
    let src = "\
local function before() return 1 end

function broken(
  x = = 2
end

function after() return 2 end
";
    let ex = run("src/err.lua", src);
    assert!(ex.has_errors);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Function, "err.before", "src/err.lua", 1, 1),
            (Function, "err.after", "src/err.lua", 7, 7),
        ]
    );
}

#[test]
fn lua_never_panics_on_fragments() {
    for src in [
        "",
        "function",
        "function M.",
        "function a:b:c() end",
        "t[1] = function() end",
        "local = function() end",
        "require",
        "require()",
        "x, y = function() end",
    ] {
        let ex = run("src/frag.lua", src);
        assert_eq!(ex.nodes[0].kind, NodeKind::File);
    }
    // A function stored under a computed key has no name.
    let ex = run("src/t.lua", "t[\"k\"] = function() end\n");
    assert_eq!(ex.nodes.len(), 1);
}

#[test]
fn lua_functions_in_table_constructors() {
    let src = "local M = {\n  -- Adds.\n  add = function(a, b) return a + b end,\n  [\"computed\"] = function() end,\n}\nsetmetatable(M, {\n  __call = function(self) return M.add(1, 2) end,\n})\n";
    let x = run("lib/t.lua", src);
    assert_eq!(
        outline(&x),
        vec![
            (NodeKind::Method, "lib.t.M.add", "lib/t.lua", 3, 3),
            (NodeKind::Function, "lib.t.__call", "lib/t.lua", 7, 7),
        ]
    );
    assert_eq!(
        unique_node(&x, "lib.t.M.add").docstring.as_deref(),
        Some("Adds.")
    );
    assert_eq!(
        unique_node(&x, "lib.t.M.add").signature.as_deref(),
        Some("add = function(a, b)")
    );
}
