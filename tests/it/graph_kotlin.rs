//! Kotlin call-graph resolution: imports and aliases, top-level functions of packages,
//! inheritance, members through `this` and implicit `this`, typed parameters, properties
//! and locals, companion objects, extension functions, shadowing, the standard library and
//! callable references, on fixture repositories.

use crate::common::graph::{graph, Graph};

const STORE: &str = r#"package com.acme.store

class Repository {
    fun save(o: Any) {}
    fun find(id: String): Any? = null
}

class Archive {
    fun find(id: String): Any? = null
}

interface Named {
    fun name(): String
}

interface Auditable : Named {
    fun audit(what: String)
}

abstract class BaseService : Auditable {
    protected val repo = Repository()

    override fun audit(what: String) {}

    fun log(message: String) {}

    override fun name() = "base"
}
"#;

const UTIL: &str = r#"package com.acme.util

fun trim(s: String) = s

fun join(parts: List<String>) = ""

object Formats {
    fun pretty(s: String) = s
}
"#;

const TEXT: &str = r#"package com.acme.text

fun trim(s: String) = s

/** Same method names as the standard library's. */
class Console {
    fun println(s: String) {}
    fun add(s: String) {}
    fun forEach(s: String) {}
}
"#;

const MODEL: &str = r#"package com.acme.app

data class Order(val id: String, val name: String) {
    fun total(): Int = 0
}

class Validator {
    fun check(order: Order) {}
}

class AuditTrail {
    fun record(order: Order) {}
}

class Clock private constructor() {
    fun now() = 0

    companion object {
        fun system() = Clock()
    }
}

fun format(order: Order) = order.name

fun Order.describe() = "order " + id
"#;

const SERVICE: &str = r#"package com.acme.app

import com.acme.store.Archive
import com.acme.store.BaseService
import com.acme.store.Repository
import com.acme.text.trim as textTrim
import com.acme.util.Formats
import com.acme.util.join as joinAll
import com.acme.util.trim

class OrderService(private val backup: Repository) : BaseService() {
    private val validator = Validator()

    fun place(order: Order, tags: MutableList<String>) {
        audit("place")
        this.log("placing")
        repo.save(order)
        backup.find(order.id)
        validator.check(order)
        val trail = AuditTrail()
        trail.record(order)
        val v: Validator = Validator()
        v.check(order)
        tags.add("placed")
        println(trim(order.name))
        joinAll(tags)
        textTrim("x")
        Formats.pretty("x")
        Clock.system()
        order.describe()
        tags.forEach(::notify)
        format(order)
    }

    fun notify(tag: String) {}

    fun restore(backup: Archive) {
        backup.find("1")
    }

    fun render(format: (Order) -> String, order: Order) = format(order)

    fun totals(orders: List<Order>) {
        orders.forEach { it.total() }
    }
}
"#;

fn shop() -> Graph {
    graph(&[
        ("src/main/kotlin/com/acme/store/Store.kt", STORE),
        ("src/main/kotlin/com/acme/util/Util.kt", UTIL),
        ("src/main/kotlin/com/acme/text/Text.kt", TEXT),
        ("src/main/kotlin/com/acme/app/Model.kt", MODEL),
        ("src/main/kotlin/com/acme/app/OrderService.kt", SERVICE),
    ])
}

const PLACE: &str = "com.acme.app.OrderService.place";

#[test]
fn imports_and_aliases_bind_the_right_definitions() {
    let g = shop();
    let file = "src/main/kotlin/com/acme/app/OrderService.kt";
    for target in [
        "com.acme.store.Archive",
        "com.acme.store.BaseService",
        "com.acme.store.Repository",
        "com.acme.text.trim",
        "com.acme.util.Formats",
        "com.acme.util.join",
        "com.acme.util.trim",
    ] {
        g.edge(file, "imports", target);
    }
    // `import ... as joinAll`: the alias calls the imported function.
    let e = g.edge(PLACE, "calls", "com.acme.util.join");
    assert_eq!(e.strategy, "import");
    assert!((e.confidence - 0.85).abs() < 1e-9, "{e:?}");
    g.edge(PLACE, "calls", "com.acme.text.trim");
    // An object's member.
    g.edge(PLACE, "calls", "com.acme.util.Formats.pretty");
}

#[test]
fn same_named_top_level_functions_are_told_apart() {
    let g = shop();
    // `trim` is imported from util, `textTrim` is text's `trim`: each call lands once.
    let trims: Vec<_> = g
        .edges
        .iter()
        .filter(|e| e.source == PLACE && e.kind == "calls" && e.target.ends_with(".trim"))
        .map(|e| (e.target.as_str(), e.line))
        .collect();
    assert_eq!(
        trims,
        [("com.acme.text.trim", 27), ("com.acme.util.trim", 25)]
    );
}

#[test]
fn inheritance_and_inherited_members() {
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
    let e = g.edge(PLACE, "calls", "com.acme.store.BaseService.audit");
    assert_eq!(e.strategy, "member");
    g.no_edge(PLACE, "calls", "com.acme.store.Auditable.audit");
    g.edge(PLACE, "calls", "com.acme.store.BaseService.log");
}

#[test]
fn typed_properties_parameters_and_locals_give_receivers_their_type() {
    let g = shop();
    // An inherited property initialized by a constructor call.
    let e = g.edge(PLACE, "calls", "com.acme.store.Repository.save");
    assert_eq!(e.strategy, "inferred_type");
    // A `private val` constructor parameter.
    let e = g.edge(PLACE, "calls", "com.acme.store.Repository.find");
    assert_eq!(e.strategy, "type_annotation");
    g.edge(PLACE, "calls", "com.acme.app.Validator.check");
    g.edge(PLACE, "calls", "com.acme.app.AuditTrail.record");
    // An extension function of a repository type, called on a typed parameter.
    g.edge(PLACE, "calls", "com.acme.app.Order.describe");
}

#[test]
fn class_calls_companions_and_objects() {
    let g = shop();
    let e = g.edge(PLACE, "calls", "com.acme.app.AuditTrail");
    assert_eq!(e.strategy, "same_package");
    g.edge(PLACE, "calls", "com.acme.app.Validator");
    g.edge(
        "com.acme.store.BaseService",
        "calls",
        "com.acme.store.Repository",
    );
    // `Clock.system()` is the companion's function.
    g.edge(PLACE, "calls", "com.acme.app.Clock.Companion.system");
    g.edge(
        "com.acme.app.Clock.Companion.system",
        "calls",
        "com.acme.app.Clock",
    );
    // Top-level function of the same package.
    let e = g.edge(PLACE, "calls", "com.acme.app.format");
    assert_eq!(e.strategy, "same_package");
}

#[test]
fn parameters_shadow_properties_and_functions() {
    let g = shop();
    let restore = "com.acme.app.OrderService.restore";
    g.edge(restore, "calls", "com.acme.store.Archive.find");
    g.no_edge(restore, "calls", "com.acme.store.Repository.find");
    // `format` is a function-typed parameter, not the top-level function.
    let render = "com.acme.app.OrderService.render";
    g.no_edge(render, "calls", "com.acme.app.format");
    assert_eq!(g.miss(render, "format").reason, "local");
}

#[test]
fn standard_library_calls_are_external() {
    let g = shop();
    for name in ["tags.add", "println"] {
        assert_eq!(g.miss(PLACE, name).reason, "external", "{name}");
    }
    for target in [
        "com.acme.text.Console.println",
        "com.acme.text.Console.add",
        "com.acme.text.Console.forEach",
    ] {
        g.no_edge(PLACE, "calls", target);
    }
    g.no_edge(
        "com.acme.app.OrderService.totals",
        "calls",
        "com.acme.text.Console.forEach",
    );
}

#[test]
fn callable_references_and_lambda_receivers() {
    let g = shop();
    let e = g.edge(PLACE, "references", "com.acme.app.OrderService.notify");
    assert!(e.confidence >= 0.9, "{e:?}");
    // `it` has no known type: the method is guessed by its name alone.
    let e = g.edge(
        "com.acme.app.OrderService.totals",
        "calls",
        "com.acme.app.Order.total",
    );
    assert_eq!(e.strategy, "unique_name");
    assert!((e.confidence - 0.5).abs() < 1e-9, "{e:?}");
}

#[test]
fn unresolved_and_ambiguous_names() {
    let g = graph(&[
        (
            "a/Animals.kt",
            "package a\n\nclass Cat {\n    fun speak() {}\n}\n\nclass Dog {\n    fun speak() {}\n}\n",
        ),
        ("b/Hidden.kt", "package b\nfun hidden() {}\n"),
        (
            "a/Zoo.kt",
            "package a\nfun pick(): Any = 1\nfun show() {\n    hidden()\n    nowhere()\n    pick().speak()\n}\n",
        ),
    ]);
    assert_eq!(g.miss("a.show", "hidden").reason, "not_found");
    g.no_edge("a.show", "calls", "b.hidden");
    assert_eq!(g.miss("a.show", "nowhere").reason, "external");
    for t in ["a.Cat.speak", "a.Dog.speak"] {
        let e = g.edge("a.show", "calls", t);
        assert_eq!(e.strategy, "ambiguous");
        assert!((e.confidence - 0.25).abs() < 1e-9, "{e:?}");
    }
}

#[test]
fn nullable_receivers_labels_defaults_and_overloads() {
    let g = graph(&[(
        "src/p/Shapes.kt",
        r#"package p

class Pen {
    fun draw(x: Int) {}
    fun draw(label: String, bold: Boolean = false) {}
    fun lift() {}
}

class Canvas(private val pen: Pen?) {
    fun paint(other: Pen?) {
        pen!!.lift()
        other?.lift()
        pen?.draw(1)
        pen?.draw("a")
        pen?.draw("b", true)
    }

    inner class Layer {
        fun clear() {
            this@Canvas.paint(null)
        }
    }
}
"#,
    )]);
    let paint = "p.Canvas.paint";
    assert_eq!(g.find(paint, "calls", "p.Pen.lift").len(), 2);
    let lines = |target: &str| -> Vec<i64> {
        g.find(paint, "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    assert_eq!(lines("p.Pen.draw"), [13]);
    assert_eq!(lines("p.Pen.draw#2"), [14, 15]);
    g.edge("p.Canvas.Layer.clear", "calls", "p.Canvas.paint");
}

const CHAIN: &str = r#"package com.acme.chain

interface Saver {
    fun save() {}
}

open class Base(val size: Int) {
    constructor(first: String, second: String) : this(first.length + second.length)

    open fun save() {}
}

class Child : Base, Saver {
    constructor(name: String) : super(name, name)
    constructor(size: Int) : super(size)

    override fun save() {
        super<Base>.save()
        super<Saver>.save()
    }
}

open class Mid(size: Int) : Base(size)

class Leaf(size: Int) : Mid(size) {
    override fun save() {
        super.save()
    }
}

open class Bare

class Kid : Bare() {
    fun save() {
        super.save()
    }
}
"#;

#[test]
fn super_calls_land_on_the_constructor_and_method_of_the_base() {
    let g = graph(&[("src/main/kotlin/com/acme/chain/Chain.kt", CHAIN)]);
    let c = "com.acme.chain";
    // `super(a, b)` is the secondary constructor taking two arguments, never the class;
    // `super(size)` is the primary constructor, which is no definition of its own.
    let e = g.edge(
        &format!("{c}.Child.Child"),
        "calls",
        &format!("{c}.Base.Base"),
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    assert_eq!(
        g.targets(&format!("{c}.Child.Child"), "calls"),
        [format!("{c}.Base.Base")]
    );
    assert!(g.targets(&format!("{c}.Child.Child#2"), "calls").is_empty());
    assert_eq!(
        g.miss(&format!("{c}.Child.Child#2"), "super").reason,
        "external"
    );
    // `super<T>.save()` is `T`'s.
    let save = format!("{c}.Child.save");
    let e = g.edge(&save, "calls", &format!("{c}.Saver.save"));
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    let lines = |target: &str| -> Vec<i64> {
        g.find(&save, "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    assert_eq!(lines(&format!("{c}.Base.save")), [18]);
    assert_eq!(lines(&format!("{c}.Saver.save")), [19]);
    // `super.save()` is inherited through `Mid`.
    let e = g.edge(
        &format!("{c}.Leaf.save"),
        "calls",
        &format!("{c}.Base.save"),
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    // A base without `save`: no edge, to the class or anything else.
    assert!(g.targets(&format!("{c}.Kid.save"), "calls").is_empty());
    g.no_edge(&format!("{c}.Kid.save"), "calls", &format!("{c}.Bare"));
    assert_eq!(
        g.miss(&format!("{c}.Kid.save"), "super.save").reason,
        "not_found"
    );
}
