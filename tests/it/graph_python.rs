//! Python call graph: imports with aliases, relative imports in a src/ layout, re-exports
//! through `__init__.py`, `self` members typed in `__init__`, annotated parameters,
//! inheritance across files, same-named functions in two modules, shadowing, the standard
//! library, class instantiation and functions passed as values.

use crate::common::graph::graph;

const MODELS: &str = r#"
class Base:
    def save(self):
        return self.validate()

    def validate(self):
        return True


class User(Base):
    def __init__(self, name):
        self.name = name

    def greet(self):
        return format_name(self.name)


def format_name(name):
    return name.title()
"#;

const STORAGE: &str = r#"
import json


class Store:
    def put(self, key, value):
        return json.dumps({key: value})


def format_name(name):
    return "<" + name + ">"
"#;

const INIT: &str = r#"
from .models import User
from .storage import Store as DefaultStore
"#;

const SERVICE: &str = r#"
import os.path
from app import User, DefaultStore
from app import storage as st
from app.models import format_name as fmt, Base


class Service(Base):
    def __init__(self):
        self.store = DefaultStore()

    def register(self, name: str, user: User) -> User:
        new_user = User(name)
        self.store.put(name, new_user)
        user.greet()
        self.save()
        return new_user

    def label(self, name):
        return fmt(name) + st.format_name(name)

    def shadowed(self, format_name, items):
        sorted_items = sorted(items, key=fmt)
        os.path.join("a", "b")
        print(sorted_items)
        return format_name(items)


def local_shadow():
    fmt = str
    return fmt(1)
"#;

fn fixture() -> crate::common::graph::Graph {
    graph(&[
        ("src/app/__init__.py", INIT),
        ("src/app/models.py", MODELS),
        ("src/app/storage.py", STORAGE),
        ("src/app/service.py", SERVICE),
        ("src/app/print.py", "def print(x):\n    return x\n"),
    ])
}

#[test]
fn imports_aliases_and_reexports_resolve_to_definitions() {
    let g = fixture();
    // `from app import User` goes through `app/__init__.py` to `app.models.User`.
    let e = g.edge("app.service.Service.register", "calls", "app.models.User");
    assert_eq!(e.strategy, "import");
    assert!((e.confidence - 0.85).abs() < 1e-9);
    // An alias of a re-export, and an aliased function.
    g.edge("app.service.Service.__init__", "calls", "app.storage.Store");
    g.edge(
        "app.service.Service.label",
        "calls",
        "app.models.format_name",
    );
    // `st.format_name` is the storage module's, never the models one.
    g.edge(
        "app.service.Service.label",
        "calls",
        "app.storage.format_name",
    );
    assert_eq!(
        g.targets("app.service.Service.label", "calls"),
        ["app.models.format_name", "app.storage.format_name"]
    );
    // Import edges point at the module file or the imported definition.
    g.edge("src/app/service.py", "imports", "app.models.format_name");
    g.edge("src/app/__init__.py", "imports", "app.models.User");
    g.edge("src/app/service.py", "imports", "src/app/storage.py");
    assert_eq!(g.miss("src/app/service.py", "os.path").reason, "external");
}

#[test]
fn self_members_typed_fields_and_annotations() {
    let g = fixture();
    // `self.store` was assigned `DefaultStore()` in `__init__`.
    let e = g.edge(
        "app.service.Service.register",
        "calls",
        "app.storage.Store.put",
    );
    assert_eq!(e.strategy, "inferred_type");
    // `user: User` types the parameter.
    let e = g.edge(
        "app.service.Service.register",
        "calls",
        "app.models.User.greet",
    );
    assert_eq!(e.strategy, "type_annotation");
    // `self.save()` is inherited from `Base` in another file.
    g.edge(
        "app.service.Service.register",
        "calls",
        "app.models.Base.save",
    );
    // Within a class: `self.validate()` and a same-module function.
    let e = g.edge("app.models.Base.save", "calls", "app.models.Base.validate");
    assert_eq!(e.strategy, "self");
    let e = g.edge("app.models.User.greet", "calls", "app.models.format_name");
    assert_eq!(e.strategy, "same_file");
    g.no_edge("app.models.User.greet", "calls", "app.storage.format_name");
}

#[test]
fn inheritance_edges_cross_files() {
    let g = fixture();
    g.edge("app.service.Service", "inherits", "app.models.Base");
    g.edge("app.models.User", "inherits", "app.models.Base");
    // A base is inherited from, not a value passed along.
    g.no_edge("app.service.Service", "references", "app.models.Base");
    g.no_edge("app.models.User", "references", "app.models.Base");
    // A metaclass given as a keyword argument is.
    let g = graph(&[(
        "m.py",
        "class Meta(type):\n    pass\n\n\nclass Base:\n    pass\n\n\nclass A(Base, metaclass=Meta):\n    pass\n",
    )]);
    g.edge("m.A", "inherits", "m.Base");
    g.no_edge("m.A", "references", "m.Base");
    g.edge("m.A", "references", "m.Meta");
}

#[test]
fn parameters_and_locals_shadow_outer_names() {
    let g = fixture();
    // `format_name` is a parameter of `shadowed`: neither module's function is called.
    g.no_edge(
        "app.service.Service.shadowed",
        "calls",
        "app.models.format_name",
    );
    g.no_edge(
        "app.service.Service.shadowed",
        "calls",
        "app.storage.format_name",
    );
    assert_eq!(
        g.miss("app.service.Service.shadowed", "format_name").reason,
        "local"
    );
    // `fmt = str` rebinds the imported alias locally.
    g.no_edge(
        "app.service.local_shadow",
        "calls",
        "app.models.format_name",
    );
}

#[test]
fn standard_library_calls_are_external_not_guessed() {
    let g = fixture();
    // `print` is a builtin even though the repository defines a function `print`.
    g.no_edge("app.service.Service.shadowed", "calls", "app.print.print");
    assert_eq!(
        g.miss("app.service.Service.shadowed", "print").reason,
        "external"
    );
    assert_eq!(
        g.miss("app.service.Service.shadowed", "os.path.join")
            .reason,
        "external"
    );
    assert_eq!(
        g.miss("app.storage.Store.put", "json.dumps").reason,
        "external"
    );
    assert_eq!(
        g.miss("app.service.Service.shadowed", "sorted").reason,
        "external"
    );
}

#[test]
fn functions_passed_as_values_are_references() {
    let g = fixture();
    g.edge(
        "app.service.Service.shadowed",
        "references",
        "app.models.format_name",
    );
    // A plain variable passed along is not a reference to anything.
    assert!(g.edges.iter().all(|e| !(e.kind == "references"
        && e.source == "app.service.Service.shadowed"
        && e.target != "app.models.format_name")));
}

#[test]
fn ambiguous_names_share_confidence_and_unknown_receivers_are_guessed_low() {
    let g = graph(&[
        ("a.py", "class A:\n    def run(self):\n        pass\n"),
        ("b.py", "class B:\n    def run(self):\n        pass\n"),
        (
            "main.py",
            "def go(thing):\n    thing.run()\n    thing.append(1)\n",
        ),
    ]);
    let targets = g.targets("main.go", "calls");
    assert_eq!(targets, ["a.A.run", "b.B.run"]);
    let e = g.edge("main.go", "calls", "a.A.run");
    assert_eq!(e.strategy, "ambiguous");
    assert!((e.confidence - 0.25).abs() < 1e-9);
    assert_eq!(g.miss("main.go", "thing.append").reason, "external");
}

#[test]
fn min_confidence_at_index_time_keeps_low_sites_as_unresolved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    crate::common::write_tree(
        &root,
        &[
            ("a.py", "class A:\n    def run(self):\n        pass\n"),
            (
                "main.py",
                "from a import A\n\ndef go(thing):\n    thing.run()\n    A()\n",
            ),
        ],
    );
    let db = dir.path().join("g.db");
    let mut opts = crate::common::options(&root, &db);
    opts.min_confidence = 0.8;
    crate::common::run(&opts).unwrap();
    let g = crate::common::graph::load(&db);
    g.edge("main.go", "calls", "a.A");
    g.no_edge("main.go", "calls", "a.A.run");
    assert_eq!(g.miss("main.go", "thing.run").reason, "low_confidence");
}

#[test]
fn return_types_module_variables_overloads_and_nested_projects() {
    let g = graph(&[
        (
            "core/globals.py",
            "from core.app import App\n\ncurrent: App = make_proxy()\n",
        ),
        (
            "core/app.py",
            "import typing as t\n\n\nclass Ctx:\n    def push(self):\n        pass\n\n\n\
             class App:\n    def context(self) -> \"Ctx\":\n        return Ctx()\n\n    \
             def run(self):\n        self.context().push()\n        ctx = self.context()\n        \
             ctx.push()\n\n\n@t.overload\ndef pick(x: int) -> int: ...\n@t.overload\n\
             def pick(x: str) -> str: ...\ndef pick(x):\n    return x\n",
        ),
        (
            "core/use.py",
            "from core.globals import current\nfrom core.app import pick\n\n\n\
             def go():\n    current.run()\n    return pick(1)\n",
        ),
        (
            "examples/demo/demo/__init__.py",
            "def create():\n    return 1\n",
        ),
        (
            "examples/demo/tests/test_demo.py",
            "from demo import create\n\n\ndef test():\n    create()\n",
        ),
        ("core/json/__init__.py", "def dumps(x):\n    return x\n"),
        (
            "core/json/util.py",
            "import json\n\n\ndef out(x):\n    return json.dumps(x)\n",
        ),
    ]);
    // `self.context()` is declared to return `Ctx`, as a receiver and through a variable.
    let e = g.edge("core.app.App.run", "calls", "core.app.Ctx.push");
    assert_eq!(e.strategy, "inferred_type");
    assert_eq!(
        g.find("core.app.App.run", "calls", "core.app.Ctx.push")
            .len(),
        2
    );
    // A typed module-level variable imported elsewhere.
    g.edge("core.use.go", "calls", "core.app.App.run");
    // `@overload` stubs come before the implementation, which is the one called.
    assert_eq!(
        g.targets("core.use.go", "calls"),
        ["core.app.App.run", "core.app.pick#3"]
    );
    // A project below the root imports its package by the name on its own `sys.path`.
    g.edge(
        "examples.demo.tests.test_demo.test",
        "calls",
        "examples.demo.demo.create",
    );
    // ...but a package's subfolder is not a `sys.path` root: `json` stays the standard one.
    g.no_edge("core.json.util.out", "calls", "core.json.dumps");
    assert_eq!(
        g.miss("core.json.util.out", "json.dumps").reason,
        "external"
    );
}

const CHAIN: &str = r#"
class Base:
    def __init__(self, name):
        self.name = name

    def save(self):
        return True


class Mid(Base):
    def save(self):
        return False


class Child(Mid):
    def __init__(self, name):
        super().__init__(name)

    def save(self):
        return super().save()


class Legacy(Mid):
    def __init__(self):
        super(Legacy, self).__init__("legacy")

    def save(self):
        return super(Mid, self).save()


class Bare:
    pass


class Kid(Bare):
    def __init__(self):
        super().__init__()

    def save(self):
        return super().save()
"#;

#[test]
fn super_calls_land_on_the_method_of_the_bases() {
    let g = graph(&[("pkg/chain.py", CHAIN)]);
    // `super().__init__(...)` is the base's `__init__` (inherited through `Mid`), never the
    // base class.
    let init = "pkg.chain.Child.__init__";
    let e = g.edge(init, "calls", "pkg.chain.Base.__init__");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    assert_eq!(g.targets(init, "calls"), ["pkg.chain.Base.__init__"]);
    // `super().save()` is the nearest base's.
    let e = g.edge("pkg.chain.Child.save", "calls", "pkg.chain.Mid.save");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    g.no_edge("pkg.chain.Child.save", "calls", "pkg.chain.Base.save");
    // `super(Legacy, self)` is `super()`; `super(Mid, self)` starts past `Mid`.
    let e = g.edge(
        "pkg.chain.Legacy.__init__",
        "calls",
        "pkg.chain.Base.__init__",
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    assert_eq!(
        g.targets("pkg.chain.Legacy.__init__", "calls"),
        ["pkg.chain.Base.__init__"]
    );
    let e = g.edge("pkg.chain.Legacy.save", "calls", "pkg.chain.Base.save");
    assert_eq!(e.strategy, "super");
    assert_eq!(
        g.targets("pkg.chain.Legacy.save", "calls"),
        ["pkg.chain.Base.save"]
    );
    // A base without `__init__` or `save` (`object`'s `__init__` runs): unresolved, and no
    // edge to the class or to another class's method.
    for kid in ["pkg.chain.Kid.__init__", "pkg.chain.Kid.save"] {
        assert!(
            g.targets(kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
        g.no_edge(kid, "calls", "pkg.chain.Bare");
    }
    g.miss("pkg.chain.Kid.__init__", "super().__init__");
    g.miss("pkg.chain.Kid.save", "super().save");
}
