//! Call-graph resolution for JavaScript, TypeScript and TSX: fixture repositories of several
//! files, with the edges each reference must produce and the ones it must not.

use crate::common::graph::{graph, Graph};

const BASE_TS: &str = r#"export interface Entity {
  id(): string;
}

export class Model {
  save(): void {
    this.validate();
  }

  validate(): void {}
}
"#;

const USER_TS: &str = r#"import { Model, Entity } from "./base";

export class User extends Model implements Entity {
  id(): string {
    return "u";
  }

  rename(name: string): void {
    this.save();
    this.touch();
  }

  touch(): void {}
}
"#;

const MODELS_INDEX_TS: &str = r#"export { User } from "./user";
export * from "./base";
"#;

const FORMAT_TS: &str = r#"export function format(s: string): string {
  return s;
}
"#;

const TEXT_TS: &str = r#"export function format(s: string): string {
  return s.trim();
}

export function parse(s: string): unknown {
  return JSON.parse(s);
}

export function readFileSync(path: string): string {
  return path;
}

export function orphan(): void {}
"#;

const REPOSITORY_TS: &str = r#"import { User } from "../models";

export class Repository {
  find(id: string): User {
    return new User();
  }

  store(user: User): void {
    user.touch();
  }
}

export function connect(): Repository {
  return new Repository();
}
"#;

const CACHE_TS: &str = r#"export default class Cache {
  clear(): void {}
}
"#;

const JOBS_TS: &str = r#"export class Job {
  process(): void {}
}
"#;

const QUEUE_TS: &str = r#"export class Queue {
  process(): void {}
}
"#;

const SERVICE_TS: &str = r#"import { Repository, connect as open } from "./db/repository";
import * as models from "./models";
import { format } from "./util/format";
import { format as textFormat } from "./util/text";
import { readFileSync } from "fs";
import Cache from "./cache";

export class Service {
  private cache: Cache = new Cache();
  private audit = new Audit();

  constructor(private repo: Repository) {}

  handle(id: string): void {
    const user = this.repo.find(id);
    this.repo.store(user);
    this.cache.clear();
    this.audit.record(id);
    open();
    format(id);
    textFormat(id);
    readFileSync(id);
    JSON.parse(id);
    parseInt(id);
  }

  local(): void {
    const repo = new Repository();
    repo.store(new models.User());
    let other: models.User | null = this.build();
    other.rename("x");
    const helper = this.build();
    helper();
  }

  build(): any {
    return null;
  }

  shadowed(format: (s: string) => string): void {
    format("x");
    for (const readFileSync of []) {
      readFileSync();
    }
  }

  callbacks(items: string[]): void {
    items.forEach(helper);
    setTimeout(this.build, 10);
    items.map(id);
  }

  mystery(thing: any): void {
    thing.process();
    orphan();
    nowhere();
  }
}

class Audit {
  record(id: string): void {}
}

function helper(s: string): void {}

function id(x: string): string {
  return x;
}
"#;

const UTIL_INDEX_TS: &str = r#"export { format as fmt } from "./format";
"#;

const REPORT_TS: &str = r#"import { fmt } from "./util";
import { Model } from "./models";

export function report(m: Model): string {
  m.save();
  return fmt("r");
}
"#;

fn ts_repo() -> Graph {
    graph(&[
        ("src/models/base.ts", BASE_TS),
        ("src/models/user.ts", USER_TS),
        ("src/models/index.ts", MODELS_INDEX_TS),
        ("src/util/format.ts", FORMAT_TS),
        ("src/util/text.ts", TEXT_TS),
        ("src/db/repository.ts", REPOSITORY_TS),
        ("src/cache.ts", CACHE_TS),
        ("src/jobs.ts", JOBS_TS),
        ("src/queue.ts", QUEUE_TS),
        ("src/service.ts", SERVICE_TS),
        ("src/util/index.ts", UTIL_INDEX_TS),
        ("src/report.ts", REPORT_TS),
    ])
}

const SHAPES_JS: &str = r#"class Shape {
  area() {
    return 0;
  }

  describe() {
    return `area ${this.area()}`;
  }
}

class Square extends Shape {
  constructor(side) {
    super();
    this.side = side;
    this.painter = new Painter();
  }

  draw() {
    this.painter.paint(this);
    return super.describe();
  }
}

class Painter {
  paint(shape) {
    shape.area();
  }
}

module.exports = { Shape, Square };
"#;

const MAIN_JS: &str = r#"const shapes = require("./shapes");
const { Square: Box } = require("./shapes");
const path = require("path");
import { EventEmitter } from "events";

class Bus extends EventEmitter {
  fire() {
    this.emit("x");
  }
}

function main() {
  const sq = new Box(2);
  sq.draw();
  const s2 = new shapes.Shape();
  s2.describe();
  path.join("a", "b");
  join("c");
  [1, 2].forEach(report);
  process.exit(0);
}

function run(report) {
  report();
}

function join(a) {
  return a;
}

function report(x) {
  console.log(x);
}

exports.main = main;
"#;

const LEGACY_JS: &str = r#"function boot() {
  globalHelper();
  report();
}
"#;

const GLOBALS_JS: &str = r#"function globalHelper() {}
"#;

fn js_repo() -> Graph {
    graph(&[
        ("lib/shapes.js", SHAPES_JS),
        ("lib/main.js", MAIN_JS),
        ("public/legacy.js", LEGACY_JS),
        ("public/globals.js", GLOBALS_JS),
    ])
}

const BUTTON_TSX: &str = r#"import React from "react";

export interface ButtonProps {
  label: string;
  onClick(): void;
}

export function Button(props: ButtonProps) {
  return <button onClick={props.onClick}>{props.label}</button>;
}

export class Toolbar extends React.Component<ButtonProps> {
  render() {
    return <Button label="a" onClick={this.handle} />;
  }

  handle(): void {}
}
"#;

const APP_TSX: &str = r#"import { useState } from "react";
import { Button, Toolbar } from "./components/Button";
import * as Icons from "./components/icons";

export function App() {
  const [count, setCount] = useState(0);
  return (
    <div>
      <Button label="x" onClick={() => setCount(count + 1)} />
      <Toolbar />
      <Icons.Heart />
    </div>
  );
}
"#;

const ICONS_TSX: &str = r#"export const Heart = () => <svg />;
"#;

fn tsx_repo() -> Graph {
    graph(&[
        ("src/components/Button.tsx", BUTTON_TSX),
        ("src/components/icons.tsx", ICONS_TSX),
        ("src/App.tsx", APP_TSX),
    ])
}

const STORE_TS: &str = r#"import { Clock } from "./clock";

export class Store {
  save(): void {}
}

export const store = new Store();
export const clock: Clock = makeClock();
export const api = {
  get(): void {},
};

function makeClock(): Clock {
  return null!;
}

export function local(): void {
  api.get();
  store.save();
}
"#;

const CLOCK_TS: &str = r#"export interface Clock {
  now(): number;
}
"#;

const CONSUMER_TS: &str = r#"import { store, clock, api } from "./store";
import * as all from "./store";

export function consume(): void {
  store.save();
  clock.now();
  api.get();
  all.api.get();
}
"#;

const ERRORS_TS: &str = r#"export interface HttpError extends Error {
  status: number;
}

export interface HttpErrorCtor {
  new (status: number): HttpError;
}

export const HttpError: HttpErrorCtor = make();

export interface TimeoutError extends HttpError {}

function make(): any {
  return null;
}
"#;

const COMPILED_JS: &str = r#"var Widget = (function () {
  function Widget() {}
  Widget.prototype.render = function () {};
  return Widget;
}());

export function build() {
  return new Widget();
}
"#;

const THIS_PARAM_TS: &str = r#"import { Store } from "./store";

export function bound(this: Store): void {
  this.save();
}
"#;

fn values_repo() -> Graph {
    graph(&[
        ("src/store.ts", STORE_TS),
        ("src/clock.ts", CLOCK_TS),
        ("src/consumer.ts", CONSUMER_TS),
        ("src/errors.ts", ERRORS_TS),
        ("src/compiled.js", COMPILED_JS),
        ("src/thisParam.ts", THIS_PARAM_TS),
    ])
}

#[test]
fn ts_imports_aliases_and_reexports() {
    let g = ts_repo();
    // `connect as open`
    let e = g.edge("service.Service.handle", "calls", "db.repository.connect");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.85, "import"));
    g.edge("src/service.ts", "imports", "db.repository.connect");
    // `import * as models from "./models"`, whose index re-exports `User`.
    g.edge("service.Service.local", "calls", "models.user.User");
    g.edge("src/service.ts", "imports", "src/models/index.ts");
    // `export { format as fmt } from "./format"`, imported from the folder's index.
    g.edge("report.report", "calls", "util.format.format");
    g.no_edge("report.report", "calls", "util.text.format");
    // `export * from "./base"` passes `Model` on; the parameter's type is found through it.
    let e = g.edge("report.report", "calls", "models.base.Model.save");
    assert_eq!(e.strategy, "type_annotation");
    g.edge("src/models/index.ts", "imports", "models.user.User");
    g.edge("src/models/index.ts", "imports", "src/models/base.ts");
}

#[test]
fn ts_inheritance_and_members_through_this() {
    let g = ts_repo();
    g.edge("models.user.User", "inherits", "models.base.Model");
    g.edge("models.user.User", "implements", "models.base.Entity");
    g.no_edge("models.user.User", "inherits", "models.base.Entity");
    // Inherited through `this`.
    let e = g.edge("models.user.User.rename", "calls", "models.base.Model.save");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "self"));
    g.edge("models.user.User.rename", "calls", "models.user.User.touch");
    g.edge(
        "models.base.Model.save",
        "calls",
        "models.base.Model.validate",
    );
    assert_eq!(
        g.targets("models.user.User.rename", "calls"),
        vec!["models.base.Model.save", "models.user.User.touch"]
    );
}

#[test]
fn ts_typed_receivers_parameter_local_and_field() {
    let g = ts_repo();
    // Parameter `user: User`.
    let e = g.edge(
        "db.repository.Repository.store",
        "calls",
        "models.user.User.touch",
    );
    assert_eq!(
        (e.confidence, e.strategy.as_str()),
        (0.85, "type_annotation")
    );
    // Constructor parameter property `private repo: Repository`.
    g.edge(
        "service.Service.handle",
        "calls",
        "db.repository.Repository.find",
    );
    g.edge(
        "service.Service.handle",
        "calls",
        "db.repository.Repository.store",
    );
    // Field `private cache: Cache` (a default import) and `private audit = new Audit()`.
    g.edge("service.Service.handle", "calls", "cache.Cache.clear");
    let e = g.edge("service.Service.handle", "calls", "service.Audit.record");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
    // Local `const repo = new Repository()` and `let other: models.User | null`.
    let e = g.edge(
        "service.Service.local",
        "calls",
        "db.repository.Repository.store",
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
    let e = g.edge("service.Service.local", "calls", "models.user.User.rename");
    assert_eq!(e.strategy, "type_annotation");
    // No typed receiver made a guess elsewhere.
    assert_eq!(
        g.targets("service.Service.handle", "calls"),
        vec![
            "cache.Cache.clear",
            "db.repository.Repository.find",
            "db.repository.Repository.store",
            "db.repository.connect",
            "service.Audit.record",
            "util.format.format",
            "util.text.format",
        ]
    );
}

#[test]
fn ts_same_name_functions_in_two_modules() {
    let g = ts_repo();
    let calls: Vec<_> = g
        .find("service.Service.handle", "calls", "util.format.format")
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(calls, vec![20], "format(id)");
    let calls: Vec<_> = g
        .find("service.Service.handle", "calls", "util.text.format")
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(calls, vec![21], "textFormat(id)");
}

#[test]
fn ts_parameters_and_locals_shadow_outer_names() {
    let g = ts_repo();
    // The parameter `format` hides the imported function.
    assert_eq!(g.miss("service.Service.shadowed", "format").reason, "local");
    g.no_edge("service.Service.shadowed", "calls", "util.format.format");
    // So does a `for ... of` variable.
    assert_eq!(
        g.miss("service.Service.shadowed", "readFileSync").reason,
        "local"
    );
    assert!(g.targets("service.Service.shadowed", "calls").is_empty());
    // `const helper = this.build()` hides the file's function `helper`.
    assert_eq!(g.miss("service.Service.local", "helper").reason, "local");
    g.no_edge("service.Service.local", "calls", "service.helper");
}

#[test]
fn ts_standard_library_calls_are_external() {
    let g = ts_repo();
    assert_eq!(
        g.miss("service.Service.handle", "JSON.parse").reason,
        "external"
    );
    g.no_edge("service.Service.handle", "calls", "util.text.parse");
    // `readFileSync` imported from "fs", though the repository has one.
    assert_eq!(
        g.miss("service.Service.handle", "readFileSync").reason,
        "external"
    );
    g.no_edge("service.Service.handle", "calls", "util.text.readFileSync");
    assert_eq!(
        g.miss("service.Service.handle", "parseInt").reason,
        "external"
    );
    assert_eq!(
        g.miss("service.Service.callbacks", "items.forEach").reason,
        "external"
    );
}

#[test]
fn ts_class_instantiation_is_an_edge_to_the_class() {
    let g = ts_repo();
    g.edge("db.repository.connect", "calls", "db.repository.Repository");
    g.edge("service.Service.local", "calls", "db.repository.Repository");
    g.edge("db.repository.Repository.find", "calls", "models.user.User");
    // Field initializers run in the class: `new Cache()` (default import), `new Audit()`.
    g.edge("service.Service", "calls", "cache.Cache");
    g.edge("service.Service", "calls", "service.Audit");
}

#[test]
fn ts_unknown_receivers_are_ambiguous_and_unimported_names_not_found() {
    let g = ts_repo();
    // `thing: any`: two classes have `process`.
    let a = g.edge("service.Service.mystery", "calls", "jobs.Job.process");
    let b = g.edge("service.Service.mystery", "calls", "queue.Queue.process");
    assert_eq!((a.confidence, a.strategy.as_str()), (0.25, "ambiguous"));
    assert_eq!((b.confidence, b.strategy.as_str()), (0.25, "ambiguous"));
    // A module sees another file's function only through an import.
    let m = g.miss("service.Service.mystery", "orphan");
    assert_eq!((m.reason.as_str(), m.candidates), ("not_found", 1));
    g.no_edge("service.Service.mystery", "calls", "util.text.orphan");
    assert_eq!(
        g.miss("service.Service.mystery", "nowhere").reason,
        "external"
    );
}

#[test]
fn ts_functions_passed_as_values_are_references() {
    let g = ts_repo();
    g.edge("service.Service.callbacks", "references", "service.helper");
    g.edge(
        "service.Service.callbacks",
        "references",
        "service.Service.build",
    );
    g.edge("service.Service.callbacks", "references", "service.id");
    // The argument `id` of `handle` is a parameter, not the function `id`.
    g.no_edge("service.Service.handle", "references", "service.id");
    // `setTimeout` itself is called, not passed; `items` is a parameter.
    assert_eq!(
        g.targets("service.Service.callbacks", "references"),
        vec!["service.Service.build", "service.helper", "service.id"]
    );
}

#[test]
fn ts_exported_variables_and_object_literals() {
    let g = values_repo();
    // `export const store = new Store()`, seen from an importer.
    let e = g.edge("consumer.consume", "calls", "store.Store.save");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
    // `export const clock: Clock = makeClock()`: the interface's method.
    let e = g.edge("consumer.consume", "calls", "clock.Clock.now");
    assert_eq!(
        (e.confidence, e.strategy.as_str()),
        (0.85, "type_annotation")
    );
    // `export const api = { get() {} }`: the object's own method, imported or through a
    // namespace, and in its own file.
    assert_eq!(
        g.find("consumer.consume", "calls", "store.api.get").len(),
        2
    );
    g.edge("store.local", "calls", "store.api.get");
    g.edge("store.local", "calls", "store.Store.save");
    assert!(g.unresolved.iter().all(|m| m.source != "consumer.consume"));
}

#[test]
fn ts_value_beside_same_named_type_and_compiled_classes() {
    let g = values_repo();
    // `const HttpError: HttpErrorCtor` does not hide `interface HttpError` from `extends`.
    g.edge("errors.TimeoutError", "inherits", "errors.HttpError");
    // `var Widget = (function () { function Widget() {} ... }())`.
    g.edge("compiled.build", "calls", "compiled.Widget");
}

#[test]
fn ts_this_parameter_types_this_outside_classes() {
    let g = values_repo();
    let e = g.edge("thisParam.bound", "calls", "store.Store.save");
    assert_eq!(e.strategy, "type_annotation");
}

#[test]
fn js_commonjs_classes_and_inferred_types() {
    let g = js_repo();
    g.edge("lib/main.js", "imports", "lib/shapes.js");
    g.edge("lib/main.js", "imports", "lib.shapes.Square");
    // `const { Square: Box } = require(...)`; `new Box()` types `sq`.
    g.edge("lib.main.main", "calls", "lib.shapes.Square");
    let e = g.edge("lib.main.main", "calls", "lib.shapes.Square.draw");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
    // `new shapes.Shape()` through the module alias.
    g.edge("lib.main.main", "calls", "lib.shapes.Shape");
    g.edge("lib.main.main", "calls", "lib.shapes.Shape.describe");
    // `this.painter = new Painter()` in the constructor types the field.
    let e = g.edge(
        "lib.shapes.Square.draw",
        "calls",
        "lib.shapes.Painter.paint",
    );
    assert_eq!(e.strategy, "inferred_type");
    // `super.describe()`; `super()` runs the default constructor of `Shape`, which
    // declares none: no edge, and none to the class.
    let e = g.edge(
        "lib.shapes.Square.draw",
        "calls",
        "lib.shapes.Shape.describe",
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    g.no_edge("lib.shapes.Square.constructor", "calls", "lib.shapes.Shape");
    assert_eq!(
        g.miss("lib.shapes.Square.constructor", "super").reason,
        "external"
    );
    g.edge("lib.shapes.Square", "inherits", "lib.shapes.Shape");
    g.edge(
        "lib.shapes.Shape.describe",
        "calls",
        "lib.shapes.Shape.area",
    );
}

#[test]
fn js_same_names_shadowing_and_the_standard_library() {
    let g = js_repo();
    // `path.join` is Node's; `join("c")` the file's own.
    assert_eq!(g.miss("lib.main.main", "path.join").reason, "external");
    let joins = g.find("lib.main.main", "calls", "lib.main.join");
    assert_eq!(joins.len(), 1);
    assert_eq!(joins[0].line, 18);
    assert_eq!(g.miss("lib.main.main", "process.exit").reason, "external");
    g.edge("lib.main.main", "references", "lib.main.report");
    // The parameter `report` hides the function.
    assert_eq!(g.miss("lib.main.run", "report").reason, "local");
    g.no_edge("lib.main.run", "calls", "lib.main.report");
    // A base class from a package: its members are external, not guessed.
    assert_eq!(g.miss("lib.main.Bus", "EventEmitter").reason, "external");
    assert_eq!(g.miss("lib.main.Bus.fire", "this.emit").reason, "external");
}

#[test]
fn js_scripts_share_globals_but_modules_do_not() {
    let g = js_repo();
    // Two plain scripts: a global function of one is visible in the other (by name only).
    let e = g.edge("public.legacy.boot", "calls", "public.globals.globalHelper");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.5, "unique_name"));
    // `report` belongs to a module (it imports), so it is no global.
    assert_eq!(g.miss("public.legacy.boot", "report").reason, "not_found");
    g.no_edge("public.legacy.boot", "calls", "lib.main.report");
}

#[test]
fn tsx_components_hooks_and_handlers() {
    let g = tsx_repo();
    g.edge("App.App", "calls", "components.Button.Button");
    g.edge("App.App", "calls", "components.Button.Toolbar");
    g.edge("App.App", "calls", "components.icons.Heart");
    assert_eq!(g.miss("App.App", "useState").reason, "external");
    assert_eq!(g.miss("App.App", "setCount").reason, "local");
    assert_eq!(
        g.targets("App.App", "calls"),
        vec![
            "components.Button.Button",
            "components.Button.Toolbar",
            "components.icons.Heart"
        ]
    );
    g.edge(
        "components.Button.Toolbar.render",
        "calls",
        "components.Button.Button",
    );
    // `onClick={this.handle}`
    g.edge(
        "components.Button.Toolbar.render",
        "references",
        "components.Button.Toolbar.handle",
    );
    assert_eq!(
        g.miss("components.Button.Toolbar", "React.Component")
            .reason,
        "external"
    );
}

#[test]
fn js_incremental_reindex_matches_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let models = "export class Store {\n  save(): void {}\n}\n\nexport class Other {\n  save(): void {}\n}\n";
    let state = "import { Store } from \"./models\";\n\nexport const store = new Store();\n";
    let user =
        "import { store } from \"./state\";\n\nexport function use(): void {\n  store.save();\n}\n";
    crate::common::write_tree(
        &root,
        &[
            ("src/models.ts", models),
            ("src/state.ts", state),
            ("src/use.ts", user),
        ],
    );
    let inc = dir.path().join("inc.db");
    crate::common::index(&root, &inc);
    crate::common::graph::load(&inc).edge("use.use", "calls", "models.Store.save");

    // The exported variable changes type; only `state.ts` is re-extracted, and `use.ts`
    // is tied to it by nothing but the variable.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let changed = "import { Other } from \"./models\";\n\nexport const store = new Other();\n";
    crate::common::write_tree(&root, &[("src/state.ts", changed)]);
    crate::common::index(&root, &inc);
    let full = dir.path().join("full.db");
    crate::common::index(&root, &full);
    let (a, b) = (
        crate::common::graph::load(&inc),
        crate::common::graph::load(&full),
    );
    assert_eq!(a.describe(), b.describe());
    a.edge("use.use", "calls", "models.Other.save");
    a.no_edge("use.use", "calls", "models.Store.save");
}

const CHAIN: &str = r#"class Base {
  constructor(name) {
    this.name = name;
  }

  save() {
    return true;
  }
}

class Mid extends Base {}

class Child extends Mid {
  constructor(name) {
    super(name);
  }

  save() {
    return super.save();
  }
}

class Bare {}

class Kid extends Bare {
  constructor() {
    super();
  }

  save() {
    return super.save();
  }
}
"#;

#[test]
fn js_and_ts_super_calls_land_on_the_constructor_and_method_of_the_base() {
    let g = graph(&[("lib/chain.js", CHAIN), ("app/chain.ts", CHAIN)]);
    for m in ["lib.chain", "app.chain"] {
        // `super(...)` runs `Base`'s constructor (`Mid`'s default one passes the arguments
        // on), never the class; `super.save()` is inherited through `Mid` too.
        let ctor = format!("{m}.Child.constructor");
        let e = g.edge(&ctor, "calls", &format!("{m}.Base.constructor"));
        assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
        assert_eq!(g.targets(&ctor, "calls"), [format!("{m}.Base.constructor")]);
        let e = g.edge(
            &format!("{m}.Child.save"),
            "calls",
            &format!("{m}.Base.save"),
        );
        assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
        // A base with neither: its default constructor, and no `save` to call.
        for kid in ["Kid.constructor", "Kid.save"] {
            let kid = format!("{m}.{kid}");
            assert!(
                g.targets(&kid, "calls").is_empty(),
                "{kid}\n{}",
                g.describe()
            );
        }
        g.no_edge(
            &format!("{m}.Kid.constructor"),
            "calls",
            &format!("{m}.Bare"),
        );
        assert_eq!(
            g.miss(&format!("{m}.Kid.constructor"), "super").reason,
            "external"
        );
        assert_eq!(
            g.miss(&format!("{m}.Kid.save"), "super.save").reason,
            "not_found"
        );
    }
}
