//! JavaScript, TypeScript and TSX extraction: definitions, qualified names, nesting, lines,
//! signatures, JSDoc, references of every kind, and recovery from syntax errors.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

/// Reference sites without the bindings (parameters, locals, fields, values passed), which
/// `javascript_bindings` covers.
fn sites(x: &codebase_indexer::FileExtract) -> Vec<Ref<'_>> {
    refs(x)
        .into_iter()
        .filter(|r| !matches!(r.1, RefKind::Local | RefKind::Field | RefKind::Reference))
        .collect()
}

const JS: &str = r#"import React, { useState as useS } from "react";
import * as utils from "./utils";
export { helper as aid } from "./helper";
export * from "./all";
const fs = require("fs");
const { join, resolve: res } = require("path");

export const MAX_ITEMS = 50;
const TIMEOUT_MS = 60 * 1000;
const notConstant = 1;
let COUNTER = 0;

/**
 * A base widget.
 */
@register("w")
export class Widget extends Base {
  static #count = 0;
  onClick = () => {
    this.emit("click");
  };

  constructor(props) {
    super(props);
    this.state = new Map();
  }

  get size() {
    return this.items.length;
  }

  @memo
  *items() {
    yield* utils.walk(this);
  }
}

export default function render(el) {
  const local = 1;
  function inner() {
    return join(el, "x");
  }
  const arrow = () => inner();
  return <Widget onClick={arrow}><span /></Widget>;
}

// Yields ids.
function* idGen() {}

const api = {
  fetch(url) { return window.fetch(url); },
  post: async function (url) {},
};

Widget.prototype.legacy = function () {};
module.exports.helper = () => {};
(function () { setup(); })();
const Anon = class { run() {} };
"#;

#[test]
fn javascript_definitions_nesting_and_lines() {
    let x = run("src/app/widgets/index.js", JS);
    assert!(!x.has_errors);
    assert_eq!(x.nodes[0].kind, NodeKind::File);
    assert_eq!(x.nodes[0].qualified_name, "src/app/widgets/index.js");
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Constant, "app.widgets.MAX_ITEMS", 0, 8, 8),
            (Constant, "app.widgets.TIMEOUT_MS", 0, 9, 9),
            (Class, "app.widgets.Widget", 0, 17, 36),
            (Method, "app.widgets.Widget.onClick", 3, 19, 21),
            (Method, "app.widgets.Widget.constructor", 3, 23, 26),
            (Method, "app.widgets.Widget.size", 3, 28, 30),
            (Method, "app.widgets.Widget.items", 3, 33, 35),
            (Function, "app.widgets.render", 0, 38, 45),
            (Function, "app.widgets.render.inner", 8, 40, 42),
            (Function, "app.widgets.render.arrow", 8, 43, 43),
            (Function, "app.widgets.idGen", 0, 48, 48),
            (Method, "app.widgets.api.fetch", 0, 51, 51),
            (Method, "app.widgets.api.post", 0, 52, 52),
            (Method, "app.widgets.Widget.legacy", 0, 55, 55),
            (Function, "app.widgets.helper", 0, 56, 56),
            (Class, "app.widgets.Anon", 0, 58, 58),
            (Method, "app.widgets.Anon.run", 16, 58, 58),
        ]
    );
    // Locals, `let` bindings, lower-case constants, plain fields, the anonymous function
    // and calls are not definitions.
    for absent in [
        "notConstant",
        "COUNTER",
        "local",
        "fs",
        "count",
        "#count",
        "setup",
    ] {
        assert!(
            x.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn javascript_signatures_and_docs() {
    let x = run("src/app/widgets/index.js", JS);
    assert_eq!(
        sig(&x, "app.widgets.Widget"),
        "@register(\"w\")\nexport class Widget extends Base"
    );
    assert_eq!(doc(&x, "app.widgets.Widget"), Some("A base widget."));
    assert_eq!(sig(&x, "app.widgets.Widget.items"), "@memo\n*items()");
    assert_eq!(sig(&x, "app.widgets.Widget.size"), "get size()");
    assert_eq!(sig(&x, "app.widgets.Widget.onClick"), "onClick = () =>");
    assert_eq!(
        sig(&x, "app.widgets.render"),
        "export default function render(el)"
    );
    assert_eq!(sig(&x, "app.widgets.render.arrow"), "const arrow = () =>");
    assert_eq!(
        sig(&x, "app.widgets.MAX_ITEMS"),
        "export const MAX_ITEMS = 50"
    );
    assert_eq!(
        sig(&x, "app.widgets.TIMEOUT_MS"),
        "const TIMEOUT_MS = 60 * 1000"
    );
    assert_eq!(
        sig(&x, "app.widgets.api.post"),
        "post: async function (url)"
    );
    assert_eq!(
        sig(&x, "app.widgets.Widget.legacy"),
        "Widget.prototype.legacy = function ()"
    );
    assert_eq!(doc(&x, "app.widgets.idGen"), Some("Yields ids."));
    assert_eq!(doc(&x, "app.widgets.render"), None);
}

#[test]
fn javascript_references() {
    let x = run("src/app/widgets/index.js", JS);
    use RefKind::*;
    let file = "src/app/widgets/index.js";
    assert_eq!(
        sites(&x),
        vec![
            (file, Import, "default", Some("react"), Some("React"), 1),
            (file, Import, "useState", Some("react"), Some("useS"), 1),
            (file, Import, "", Some("./utils"), Some("utils"), 2),
            (file, Import, "helper", Some("./helper"), Some("aid"), 3),
            (file, Import, "*", Some("./all"), None, 4),
            (file, Import, "", Some("fs"), Some("fs"), 5),
            (file, Import, "join", Some("path"), None, 6),
            (file, Import, "resolve", Some("path"), Some("res"), 6),
            ("app.widgets.Widget", Decorator, "register", None, None, 16),
            ("app.widgets.Widget", Inherits, "Base", None, None, 17),
            (
                "app.widgets.Widget.onClick",
                Call,
                "this.emit",
                None,
                None,
                20
            ),
            (
                "app.widgets.Widget.constructor",
                Call,
                "super",
                None,
                None,
                24
            ),
            (
                "app.widgets.Widget.constructor",
                Call,
                "Map",
                None,
                None,
                25
            ),
            (
                "app.widgets.Widget.items",
                Decorator,
                "memo",
                None,
                None,
                32
            ),
            (
                "app.widgets.Widget.items",
                Call,
                "utils.walk",
                None,
                None,
                34
            ),
            ("app.widgets.render.inner", Call, "join", None, None, 41),
            ("app.widgets.render.arrow", Call, "inner", None, None, 43),
            // A capitalized JSX element renders (calls) a component; `<span/>` does not.
            ("app.widgets.render", Call, "Widget", None, None, 44),
            (
                "app.widgets.api.fetch",
                Call,
                "window.fetch",
                None,
                None,
                51
            ),
            (file, Call, "setup", None, None, 57),
        ]
    );
}

const TS: &str = r#"import type { User } from "../models";
import db = require("./db");
export * as validators from "./validators";

export const DEFAULT_ROLE = "viewer" as const;

/** Persists users. */
export interface Repository<T> extends Reader<T>, Writer {
  find(id: string): Promise<T>;
  readonly name: string;
}

export type UserId = string | number;

export enum Role {
  Admin,
  Viewer,
}

export namespace Api.V1 {
  export function get(): void {}
}

declare module "express" {
  interface Request { user: User }
}

export abstract class Service<T> extends BaseService<T> implements Repository<T>, Disposable {
  @Inject()
  private readonly repo: Repository<T>;

  /** Finds one. */
  @Log("debug")
  @Trace
  async find(id: string): Promise<T> {
    return this.repo.find(id);
  }

  abstract dispose(): void;

  handle = (e: Event): void => {
    this.log(e);
  };
}

export function parse(input: string): number;
export function parse(input: unknown): number {
  return Number(input);
}

declare function external(x: number): string;
"#;

#[test]
fn typescript_definitions_signatures_and_docs() {
    let x = run("src/services/user.ts", TS);
    assert!(!x.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Constant, "services.user.DEFAULT_ROLE", 0, 5, 5),
            (Interface, "services.user.Repository", 0, 8, 11),
            (Method, "services.user.Repository.find", 2, 9, 9),
            (Type, "services.user.UserId", 0, 13, 13),
            (Enum, "services.user.Role", 0, 15, 18),
            (Module, "services.user.Api.V1", 0, 20, 22),
            (Function, "services.user.Api.V1.get", 6, 21, 21),
            (Module, "services.user.express", 0, 24, 26),
            (Interface, "services.user.express.Request", 8, 25, 25),
            (Class, "services.user.Service", 0, 28, 44),
            (Method, "services.user.Service.find", 10, 35, 37),
            (Method, "services.user.Service.dispose", 10, 39, 39),
            (Method, "services.user.Service.handle", 10, 41, 43),
            // The overload signature folds into its implementation, which is reported at
            // the first overload's line (as ctags does).
            (Function, "services.user.parse", 0, 46, 49),
            (Function, "services.user.external", 0, 51, 51),
        ]
    );
    assert_eq!(
        sig(&x, "services.user.DEFAULT_ROLE"),
        "export const DEFAULT_ROLE = \"viewer\" as const"
    );
    assert_eq!(
        sig(&x, "services.user.Repository"),
        "export interface Repository<T> extends Reader<T>, Writer"
    );
    assert_eq!(doc(&x, "services.user.Repository"), Some("Persists users."));
    assert_eq!(
        sig(&x, "services.user.Repository.find"),
        "find(id: string): Promise<T>"
    );
    assert_eq!(
        sig(&x, "services.user.UserId"),
        "export type UserId = string | number"
    );
    assert_eq!(sig(&x, "services.user.Role"), "export enum Role");
    assert_eq!(sig(&x, "services.user.Api.V1"), "export namespace Api.V1");
    assert_eq!(
        sig(&x, "services.user.express"),
        "declare module \"express\""
    );
    assert_eq!(
        sig(&x, "services.user.Service"),
        "export abstract class Service<T> extends BaseService<T> implements Repository<T>, Disposable"
    );
    // Member decorators are siblings in the TypeScript tree; they still lead the signature
    // and the JSDoc above them is the method's.
    assert_eq!(
        sig(&x, "services.user.Service.find"),
        "@Log(\"debug\")\n@Trace\nasync find(id: string): Promise<T>"
    );
    assert_eq!(doc(&x, "services.user.Service.find"), Some("Finds one."));
    assert_eq!(
        sig(&x, "services.user.Service.dispose"),
        "abstract dispose(): void"
    );
    assert_eq!(
        sig(&x, "services.user.Service.handle"),
        "handle = (e: Event): void =>"
    );
    assert_eq!(
        sig(&x, "services.user.parse"),
        "export function parse(input: unknown): number"
    );
    assert_eq!(
        sig(&x, "services.user.external"),
        "declare function external(x: number): string"
    );
    // Property signatures and plain fields are not definitions.
    assert!(x
        .nodes
        .iter()
        .all(|n| n.name != "name" && n.name != "repo" && n.name != "user"));
}

#[test]
fn typescript_references() {
    let x = run("src/services/user.ts", TS);
    use RefKind::*;
    let file = "src/services/user.ts";
    assert_eq!(
        sites(&x),
        vec![
            (file, Import, "User", Some("../models"), None, 1),
            (file, Import, "", Some("./db"), Some("db"), 2),
            (
                file,
                Import,
                "",
                Some("./validators"),
                Some("validators"),
                3
            ),
            (
                "services.user.Repository",
                Inherits,
                "Reader",
                None,
                None,
                8
            ),
            (
                "services.user.Repository",
                Inherits,
                "Writer",
                None,
                None,
                8
            ),
            (
                "services.user.Service",
                Inherits,
                "BaseService",
                None,
                None,
                28
            ),
            (
                "services.user.Service",
                Implements,
                "Repository",
                None,
                None,
                28
            ),
            (
                "services.user.Service",
                Implements,
                "Disposable",
                None,
                None,
                28
            ),
            // A decorated field is not a definition: its decorator belongs to the class.
            ("services.user.Service", Decorator, "Inject", None, None, 29),
            (
                "services.user.Service.find",
                Decorator,
                "Log",
                None,
                None,
                33
            ),
            (
                "services.user.Service.find",
                Decorator,
                "Trace",
                None,
                None,
                34
            ),
            (
                "services.user.Service.find",
                Call,
                "this.repo.find",
                None,
                None,
                36
            ),
            (
                "services.user.Service.handle",
                Call,
                "this.log",
                None,
                None,
                42
            ),
            ("services.user.parse", Call, "Number", None, None, 48),
        ]
    );
}

const TSX: &str = r#"import { FC } from "react";

interface Props {
  label: string;
  onClick(): void;
}

/** The button. */
export const Button: FC<Props> = ({ label, onClick }) => {
  const handle = () => onClick();
  return (
    <Layout.Row>
      <button onClick={handle}>{format(label)}</button>
      <Icon name="x" />
    </Layout.Row>
  );
};

export default Button;
"#;

#[test]
fn tsx_components_and_jsx_calls() {
    let x = run("src/components/Button.tsx", TSX);
    assert!(!x.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Interface, "components.Button.Props", 0, 3, 6),
            (Method, "components.Button.Props.onClick", 1, 5, 5),
            (Function, "components.Button.Button", 0, 9, 17),
            (Function, "components.Button.Button.handle", 3, 10, 10),
        ]
    );
    assert_eq!(
        sig(&x, "components.Button.Button"),
        "export const Button: FC<Props> = ({ label, onClick }) =>"
    );
    assert_eq!(doc(&x, "components.Button.Button"), Some("The button."));
    use RefKind::*;
    assert_eq!(
        sites(&x),
        vec![
            (
                "src/components/Button.tsx",
                Import,
                "FC",
                Some("react"),
                None,
                1
            ),
            (
                "components.Button.Button.handle",
                Call,
                "onClick",
                None,
                None,
                10
            ),
            (
                "components.Button.Button",
                Call,
                "Layout.Row",
                None,
                None,
                12
            ),
            ("components.Button.Button", Call, "format", None, None, 13),
            ("components.Button.Button", Call, "Icon", None, None, 14),
        ]
    );
}

#[test]
fn typescript_small_forms() {
    let src = r#"@sealed class Plain {
  m(a: string): void;
  m(a: any) {}
  constructor(@Inject(TOKEN) private t: T) {}
}
type Shape = { area(): number };
export default class extends Base {}
export * from "./more";
export { a, b as c } from "./ab";
const lazy = import("./lazy");
const API_URL = `https://${host}`;
const EMPTY = [] as const;
class Impl implements ns.Port<T> {}
interface Emitter {
  new (x: number): Emitter;
  on(e: "a"): void;
  on(e: "b"): void;
}
"#;
    let x = run("lib/small.ts", src);
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Class, "lib.small.Plain", 0, 1, 5),
            // Overload plus implementation: one method, at the overload's line.
            (Method, "lib.small.Plain.m", 1, 2, 3),
            (Method, "lib.small.Plain.constructor", 1, 4, 4),
            (Type, "lib.small.Shape", 0, 6, 6),
            (Method, "lib.small.Shape.area", 4, 6, 6),
            (Class, "lib.small.default", 0, 7, 7),
            (Constant, "lib.small.EMPTY", 0, 12, 12),
            (Class, "lib.small.Impl", 0, 13, 13),
            (Interface, "lib.small.Emitter", 0, 14, 18),
            (Method, "lib.small.Emitter.new", 9, 15, 15),
            // Interface overloads have no implementation to fold into: each is kept.
            (Method, "lib.small.Emitter.on", 9, 16, 16),
            (Method, "lib.small.Emitter.on", 9, 17, 17),
        ]
    );
    assert_eq!(sig(&x, "lib.small.Plain"), "@sealed class Plain");
    assert_eq!(sig(&x, "lib.small.Plain.m"), "m(a: any)");
    assert_eq!(sig(&x, "lib.small.Emitter.new"), "new (x: number): Emitter");
    assert_eq!(
        sig(&x, "lib.small.default"),
        "export default class extends Base"
    );
    assert_eq!(
        sig(&x, "lib.small.Plain.constructor"),
        "constructor(@Inject(TOKEN) private t: T)"
    );
    use RefKind::*;
    assert_eq!(
        sites(&x),
        vec![
            ("lib.small.Plain", Decorator, "sealed", None, None, 1),
            (
                "lib.small.Plain.constructor",
                Decorator,
                "Inject",
                None,
                None,
                4
            ),
            ("lib.small.default", Inherits, "Base", None, None, 7),
            ("lib/small.ts", Import, "*", Some("./more"), None, 8),
            ("lib/small.ts", Import, "a", Some("./ab"), None, 9),
            ("lib/small.ts", Import, "b", Some("./ab"), Some("c"), 9),
            ("lib/small.ts", Import, "", Some("./lazy"), None, 10),
            ("lib.small.Impl", Implements, "ns.Port", None, None, 13),
        ]
    );
}

#[test]
fn typescript_syntax_error_keeps_surrounding_definitions() {
    let src = r#"export function before(): void {}

class Broken {
  method( {
}

export function after(): number { return before(); }
"#;
    let x = run("src/services/broken.ts", src);
    assert!(x.has_errors);
    let names: Vec<&str> = x.nodes[1..]
        .iter()
        .map(|n| n.qualified_name.as_str())
        .collect();
    assert_eq!(names, ["services.broken.before", "services.broken.after"]);
    assert_eq!(node(&x, "services.broken.after").start_line, 7);
    assert!(x
        .refs
        .iter()
        .any(|r| r.kind == RefKind::Call && r.name == "before" && r.line == 7));
}

#[test]
fn module_names_follow_the_path() {
    let x = run("src/index.js", "function f() {}\n");
    assert_eq!(x.nodes[1].qualified_name, "index.f");
    let x = run("packages/ui/index.ts", "function f() {}\n");
    assert_eq!(x.nodes[1].qualified_name, "packages.ui.f");
    let x = run("app.mjs", "function f() {}\n");
    assert_eq!(x.nodes[1].qualified_name, "app.f");
}

const BINDINGS_TS: &str = r#"import { Repo } from "./repo";
const { a, b: renamed } = require("./m");

export class Service {
  private cache: Cache;
  private items = new Map<string, Item>();
  maybe?: ns.Box<T> | null;
  handler = (e: Event) => this.run(e);

  constructor(private repo: Repo, readonly size: number, plain: Other) {
    this.clock = new Clock();
  }

  run(input: Input, [first]: Item[], { key }: Opts, cb: (x: Skip) => void, ...rest: any[]) {
    const made = new ns.Widget<T>();
    let viaCall = build(), viaMethod = this.make(), cast = input as Typed;
    for (const item of input) {}
    try {} catch (err) {}
    input.each(x => x, this.run, cb);
  }
}

export const LIMIT = 10;
export const shared: Shared = create();
function free(this: Window, arg = 1) {}
"#;

#[test]
fn typescript_bindings_locals_fields_and_values_passed() {
    let x = run("src/service.ts", BINDINGS_TS);
    use RefKind::*;
    let bindings: Vec<_> = refs(&x)
        .into_iter()
        .filter(|r| matches!(r.1, Local | Field | Reference))
        .map(|(node, kind, name, ty, _, line)| (node, kind, name, ty, line))
        .collect();
    let class = "service.Service";
    let ctor = "service.Service.constructor";
    let run_ = "service.Service.run";
    let file = "src/service.ts";
    assert_eq!(
        bindings,
        vec![
            // Class fields with a type or a `new` initializer; the arrow field is a method.
            (class, Field, "cache", Some("Cache"), 5),
            (class, Field, "items", Some("Map()"), 6),
            (class, Field, "maybe", Some("ns.Box"), 7),
            ("service.Service.handler", Local, "e", Some("Event"), 8),
            ("service.Service.handler", Reference, "e", None, 8),
            // Parameter properties are fields too; a plain parameter is only a local.
            (ctor, Local, "repo", Some("Repo"), 10),
            (ctor, Field, "this.repo", Some("Repo"), 10),
            (ctor, Local, "size", None, 10),
            (ctor, Local, "plain", Some("Other"), 10),
            (ctor, Field, "this.clock", Some("Clock()"), 11),
            // Destructured and rest parameters are untyped; function types bind nothing.
            (run_, Local, "input", Some("Input"), 14),
            (run_, Local, "first", None, 14),
            (run_, Local, "key", None, 14),
            (run_, Local, "cb", None, 14),
            (run_, Local, "rest", None, 14),
            (run_, Local, "made", Some("ns.Widget()"), 15),
            (run_, Local, "viaCall", Some("build()"), 16),
            (run_, Local, "viaMethod", None, 16),
            (run_, Local, "cast", Some("Typed"), 16),
            (run_, Local, "item", None, 17),
            (run_, Local, "err", None, 18),
            (run_, Reference, "this.run", None, 19),
            (run_, Reference, "cb", None, 19),
            (run_, Local, "x", None, 19),
            // Top level: no binding for a `require` or a literal constant.
            (file, Local, "shared", Some("Shared"), 24),
            ("service.free", Local, "this", Some("Window"), 25),
            ("service.free", Local, "arg", None, 25),
        ]
    );
}
