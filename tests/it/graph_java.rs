//! Java call-graph resolution: imports, inheritance, members through `this`, implicit
//! `this`, typed parameters, locals and fields, packages with same-named classes, shadowing,
//! the standard library, instantiation and method references, on fixture repositories.

use crate::common::graph::{graph, Graph};

const REPOSITORY: &str = r#"package com.acme.store;

public class Repository {
    public void save(Object o) {}
    public Object find(String id) { return null; }
}
"#;

const ARCHIVE: &str = r#"package com.acme.store;

public class Archive {
    public Object find(String id) { return null; }
}
"#;

const AUDITABLE: &str = r#"package com.acme.store;

public interface Auditable extends Named {
    void audit(String what);
}
"#;

const NAMED: &str = r#"package com.acme.store;

public interface Named {
    String name();
}
"#;

const BASE_SERVICE: &str = r#"package com.acme.store;

public abstract class BaseService implements Auditable {
    protected Repository repo = new Repository();

    public void audit(String what) {}

    public void log(String message) {}

    public String name() { return "base"; }
}
"#;

const UTIL_STRINGS: &str = r#"package com.acme.util;

public final class Strings {
    public static String trim(String s) { return s; }

    public static String join(Iterable<String> parts) { return ""; }
}
"#;

const TEXT_STRINGS: &str = r#"package com.acme.text;

public final class Strings {
    public static String trim(String s) { return s; }
}
"#;

const CONSOLE: &str = r#"package com.acme.text;

/** Same method names as the standard library's. */
public class Console {
    public void println(String s) {}
    public void add(String s) {}
    public void info(String s) {}
}
"#;

const ORDER: &str = r#"package com.acme.app;

public class Order {
    public String id() { return "1"; }
    public String name() { return "o"; }
}
"#;

const VALIDATOR: &str = r#"package com.acme.app;

class Validator {
    void check(Order order) {}
}
"#;

const AUDIT_TRAIL: &str = r#"package com.acme.app;

class AuditTrail {
    void record(Order order) {}
}
"#;

const ORDER_SERVICE: &str = r#"package com.acme.app;

import com.acme.store.Archive;
import com.acme.store.BaseService;
import com.acme.store.Repository;
import com.acme.util.Strings;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

import static com.acme.util.Strings.join;

public class OrderService extends BaseService {
    private static final Logger LOG = Logger.getLogger("orders");
    private final Repository backup;

    public OrderService(Repository backup) {
        super();
        this.backup = backup;
    }

    public void place(Order order, List<String> tags) {
        audit("place");
        this.log("placing");
        repo.save(order);
        backup.find(order.id());
        Validator v = new Validator();
        v.check(order);
        var trail = new AuditTrail();
        trail.record(order);
        tags.add("placed");
        String s = Strings.trim(order.name());
        System.out.println(s);
        LOG.info(s);
        new ArrayList<String>().add(s);
        join(tags);
        tags.forEach(this::notify);
    }

    void notify(String tag) {}

    void restore(Archive backup) {
        backup.find("1");
    }

    void rename(Order order) {
        for (Order o : java.util.List.of(order)) {
            Validator repo = new Validator();
            repo.check(o);
        }
    }
}
"#;

const REPORT: &str = r#"package com.acme.app;

import com.acme.text.Strings;

class Report {
    String title(Order order) {
        return Strings.trim(order.name());
    }
}
"#;

fn shop() -> Graph {
    graph(&[
        ("src/com/acme/store/Repository.java", REPOSITORY),
        ("src/com/acme/store/Archive.java", ARCHIVE),
        ("src/com/acme/store/Auditable.java", AUDITABLE),
        ("src/com/acme/store/Named.java", NAMED),
        ("src/com/acme/store/BaseService.java", BASE_SERVICE),
        ("src/com/acme/util/Strings.java", UTIL_STRINGS),
        ("src/com/acme/text/Strings.java", TEXT_STRINGS),
        ("src/com/acme/text/Console.java", CONSOLE),
        ("src/com/acme/app/Order.java", ORDER),
        ("src/com/acme/app/Validator.java", VALIDATOR),
        ("src/com/acme/app/AuditTrail.java", AUDIT_TRAIL),
        ("src/com/acme/app/OrderService.java", ORDER_SERVICE),
        ("src/com/acme/app/Report.java", REPORT),
    ])
}

const PLACE: &str = "com.acme.app.OrderService.place";

#[test]
fn imports_land_on_classes_and_static_members() {
    let g = shop();
    let file = "src/com/acme/app/OrderService.java";
    for target in [
        "com.acme.store.Archive",
        "com.acme.store.BaseService",
        "com.acme.store.Repository",
        "com.acme.util.Strings",
        "com.acme.util.Strings.join",
    ] {
        let e = g.edge(file, "imports", target);
        assert_eq!(e.strategy, "import");
    }
    g.no_edge(file, "imports", "com.acme.text.Strings");
    assert_eq!(g.miss(file, "java.util.List").reason, "external");
    assert_eq!(g.miss(file, "java.util.logging.Logger").reason, "external");
}

#[test]
fn inheritance_edges_and_inherited_members() {
    let g = shop();
    g.edge(
        "com.acme.app.OrderService",
        "inherits",
        "com.acme.store.BaseService",
    );
    g.edge(
        "com.acme.store.BaseService",
        "implements",
        "com.acme.store.Auditable",
    );
    g.edge(
        "com.acme.store.Auditable",
        "inherits",
        "com.acme.store.Named",
    );
    // `audit(...)` is an implicit `this.audit`, inherited from the base class.
    let e = g.edge(PLACE, "calls", "com.acme.store.BaseService.audit");
    assert_eq!(e.strategy, "member");
    assert!(e.confidence >= 0.9, "{e:?}");
    g.no_edge(PLACE, "calls", "com.acme.store.Auditable.audit");
    g.edge(PLACE, "calls", "com.acme.store.BaseService.log");
    // `super()` calls the base's implicit constructor (it declares none): no edge, and
    // none to the class.
    let ctor = "com.acme.app.OrderService.OrderService";
    g.no_edge(ctor, "calls", "com.acme.store.BaseService");
    assert_eq!(g.miss(ctor, "super").reason, "external");
}

#[test]
fn typed_fields_parameters_and_locals_give_receivers_their_type() {
    let g = shop();
    // An inherited field used without `this.`.
    let e = g.edge(PLACE, "calls", "com.acme.store.Repository.save");
    assert_eq!(e.strategy, "type_annotation");
    assert!((e.confidence - 0.85).abs() < 1e-9, "{e:?}");
    // A field declared in the class.
    g.edge(PLACE, "calls", "com.acme.store.Repository.find");
    // A parameter.
    g.edge(PLACE, "calls", "com.acme.app.Order.id");
    g.edge(PLACE, "calls", "com.acme.app.Order.name");
    // A local with a declared type, and a `var` typed by its constructor.
    g.edge(PLACE, "calls", "com.acme.app.Validator.check");
    let e = g.edge(PLACE, "calls", "com.acme.app.AuditTrail.record");
    assert_eq!(e.strategy, "inferred_type");
    assert!((e.confidence - 0.8).abs() < 1e-9, "{e:?}");
}

#[test]
fn instantiation_is_an_edge_to_the_class() {
    let g = shop();
    let e = g.edge(PLACE, "calls", "com.acme.app.Validator");
    assert_eq!(e.strategy, "same_package");
    g.edge(PLACE, "calls", "com.acme.app.AuditTrail");
    g.edge(
        "com.acme.store.BaseService",
        "calls",
        "com.acme.store.Repository",
    );
}

#[test]
fn same_named_classes_in_two_packages_are_told_apart_by_imports() {
    let g = shop();
    assert_eq!(
        g.targets(PLACE, "calls")
            .into_iter()
            .filter(|t| t.ends_with(".trim"))
            .collect::<Vec<_>>(),
        ["com.acme.util.Strings.trim"]
    );
    let report = "com.acme.app.Report.title";
    g.edge(report, "calls", "com.acme.text.Strings.trim");
    g.no_edge(report, "calls", "com.acme.util.Strings.trim");
    // A static import binds the method.
    g.edge(PLACE, "calls", "com.acme.util.Strings.join");
}

#[test]
fn parameters_and_locals_shadow_fields() {
    let g = shop();
    // `backup` is an `Archive` parameter here, not the `Repository` field.
    let restore = "com.acme.app.OrderService.restore";
    g.edge(restore, "calls", "com.acme.store.Archive.find");
    g.no_edge(restore, "calls", "com.acme.store.Repository.find");
    // A local `repo` shadows the inherited field.
    let rename = "com.acme.app.OrderService.rename";
    g.edge(rename, "calls", "com.acme.app.Validator.check");
    g.no_edge(rename, "calls", "com.acme.store.Repository.save");
    g.no_edge(rename, "calls", "com.acme.store.Repository.find");
}

#[test]
fn standard_library_calls_are_external_and_never_land_on_same_named_methods() {
    let g = shop();
    for name in ["tags.add", "System.out.println", "LOG.info"] {
        let m = g.miss(PLACE, name);
        assert_eq!(m.reason, "external", "{name}: {m:?}");
    }
    for target in [
        "com.acme.text.Console.println",
        "com.acme.text.Console.add",
        "com.acme.text.Console.info",
    ] {
        g.no_edge(PLACE, "calls", target);
    }
    assert_eq!(
        g.miss("com.acme.app.OrderService.LOG", "Logger.getLogger")
            .reason,
        "external"
    );
    // A method of a fresh object of a library class: external, never guessed.
    let m = g.miss(PLACE, "new ArrayList<String>().add");
    assert_eq!(m.reason, "external");
}

#[test]
fn method_references_are_reference_edges() {
    let g = shop();
    let e = g.edge(PLACE, "references", "com.acme.app.OrderService.notify");
    assert!(e.confidence >= 0.9, "{e:?}");
    g.no_edge(PLACE, "calls", "com.acme.app.OrderService.notify");
}

#[test]
fn unknown_receivers_are_guessed_by_name_or_left_unresolved() {
    let g = graph(&[
        (
            "a/Cat.java",
            "package a;\npublic class Cat { public void speak() {} public void purr() {} }\n",
        ),
        (
            "a/Dog.java",
            "package a;\npublic class Dog { public void speak() {} public int hashCode() { return 0; } }\n",
        ),
        (
            "b/Hidden.java",
            "package b;\npublic class Hidden { public static void run() {} }\n",
        ),
        (
            "a/Zoo.java",
            r#"package a;

public class Zoo {
    Object pick() { return null; }

    void show() {
        pick().hashCode();
        animals().speak();
        animals().purr();
        Hidden.run();
        nowhere();
    }
}
"#,
        ),
    ]);
    let show = "a.Zoo.show";
    // Two candidates share the name: both, each at a split confidence.
    for t in ["a.Cat.speak", "a.Dog.speak"] {
        let e = g.edge(show, "calls", t);
        assert_eq!(e.strategy, "ambiguous");
        assert!((e.confidence - 0.25).abs() < 1e-9, "{e:?}");
    }
    let e = g.edge(show, "calls", "a.Cat.purr");
    assert_eq!(e.strategy, "unique_name");
    assert!((e.confidence - 0.5).abs() < 1e-9, "{e:?}");
    // A class of another package that is not imported.
    assert_eq!(g.miss(show, "Hidden.run").reason, "not_found");
    g.no_edge(show, "calls", "b.Hidden.run");
    assert_eq!(g.miss(show, "nowhere").reason, "external");
    // A common method of the standard types on an unknown receiver is not guessed.
    assert_eq!(g.miss(show, "pick().hashCode").reason, "dynamic");
    g.no_edge(show, "calls", "a.Dog.hashCode");
}

#[test]
fn java_lang_in_the_repository_is_implicitly_imported() {
    let g = graph(&[
        (
            "java/lang/Integer.java",
            "package java.lang;\npublic final class Integer { public static int parseInt(String s) { return 0; } }\n",
        ),
        (
            "app/Main.java",
            "package app;\nclass Main { void run() { Integer.parseInt(\"1\"); } }\n",
        ),
    ]);
    let e = g.edge("app.Main.run", "calls", "java.lang.Integer.parseInt");
    assert_eq!(e.strategy, "implicit_import");
}

#[test]
fn constants_nested_classes_records_and_outer_this() {
    let g = graph(&[
        (
            "p/Engine.java",
            r#"package p;

public class Engine {
    public static final Engine DEFAULT = new Engine();

    public void start() {}

    public static class Part {
        public void fit() {}
    }

    record Slot(Part part, int size) {
        void use() {
            part.fit();
        }
    }

    class Crank {
        void turn() {
            Engine.this.start();
            DEFAULT.start();
        }
    }
}
"#,
        ),
        (
            "q/Garage.java",
            r#"package q;

import p.Engine;
import p.Engine.Part;

class Garage {
    void open(Part part) {
        part.fit();
        Engine.DEFAULT.start();
        new Engine.Part().fit();
    }
}
"#,
        ),
    ]);
    g.edge("p.Engine.Slot.use", "calls", "p.Engine.Part.fit");
    g.edge("p.Engine.Crank.turn", "calls", "p.Engine.start");
    g.edge("q.Garage.open", "calls", "p.Engine.Part.fit");
    g.edge("q.Garage.open", "calls", "p.Engine.start");
    g.edge("q.Garage.open", "calls", "p.Engine.Part");
    g.edge("q/Garage.java", "imports", "p.Engine.Part");
}

#[test]
fn overloads_are_chosen_by_argument_count_and_literal_types() {
    let g = graph(&[
        (
            "p/Printer.java",
            r#"package p;

public class Printer {
    public void print(String s) {}
    public void print(int i) {}
    public void print(char c) {}
    public void print(String format, Object... args) {}
    public void flush() {}
    public void flush(boolean force) {}
}
"#,
        ),
        (
            "p/Report.java",
            r#"package p;

class Report {
    void render(Printer out, Object value) {
        out.print("title");
        out.print(42);
        out.print('x');
        out.print("%s=%s", "a", value);
        out.print(value);
        out.flush();
        out.print("total: " + value);
    }
}
"#,
        ),
    ]);
    let lines = |target: &str| -> Vec<i64> {
        g.find("p.Report.render", "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    // `print(String)`, `print(int)`, `print(char)`, `print(String, Object...)` in that order.
    assert_eq!(lines("p.Printer.print"), [5, 9, 11]);
    assert_eq!(lines("p.Printer.print#2"), [6, 9]);
    assert_eq!(lines("p.Printer.print#3"), [7, 9]);
    assert_eq!(lines("p.Printer.print#4"), [8]);
    assert_eq!(lines("p.Printer.flush"), [10]);
    g.no_edge("p.Report.render", "calls", "p.Printer.flush#2");
}

const CHAIN: &str = r#"package com.acme.chain;

public class Base {
    public Base() {}
    public Base(int size) {}
    public Base(String name) {}
    public void save() {}
}

class Mid extends Base {
    Mid() { super(); }
}

class Child extends Mid {
    Child() { super(); }
    public void save() { super.save(); }
}

class Sized extends Base {
    Sized() { super(8); }
    Sized(String name) { super("sized " + name); }
}

class Bare {}

class Kid extends Bare {
    Kid() { super(); }
    public void save() { super.save(); }
}
"#;

#[test]
fn super_calls_land_on_the_constructor_and_method_of_the_base() {
    let g = graph(&[("src/com/acme/chain/Base.java", CHAIN)]);
    let c = "com.acme.chain";
    // `super(...)` is the base's constructor that the arguments fit, never the class.
    let e = g.edge(&format!("{c}.Mid.Mid"), "calls", &format!("{c}.Base.Base"));
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    g.no_edge(&format!("{c}.Mid.Mid"), "calls", &format!("{c}.Base"));
    assert_eq!(
        g.targets(&format!("{c}.Sized.Sized"), "calls"),
        [format!("{c}.Base.Base#2")]
    );
    assert_eq!(
        g.targets(&format!("{c}.Sized.Sized#2"), "calls"),
        [format!("{c}.Base.Base#3")]
    );
    // Constructors are not inherited: `Child`'s `super()` is `Mid`'s own.
    assert_eq!(
        g.targets(&format!("{c}.Child.Child"), "calls"),
        [format!("{c}.Mid.Mid")]
    );
    // `super.save()` is inherited through `Mid`.
    let e = g.edge(
        &format!("{c}.Child.save"),
        "calls",
        &format!("{c}.Base.save"),
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    // A base with neither: the implicit constructor, and no `save` to call.
    for kid in ["Kid.Kid", "Kid.save"] {
        let kid = format!("{c}.{kid}");
        assert!(
            g.targets(&kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
    }
    assert_eq!(g.miss(&format!("{c}.Kid.Kid"), "super").reason, "external");
    assert_eq!(
        g.miss(&format!("{c}.Kid.save"), "super.save").reason,
        "not_found"
    );
}
