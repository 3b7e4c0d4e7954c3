//! C++ extraction: namespaces, classes, members, templates, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const SHAPE: &str = r#"#include <vector>
#include "geo/base.hpp"

using namespace std;
using geo::Point;

namespace geo {
namespace detail {
int clamp(int v) { return v; }
}

// A drawable shape.
template <typename T>
class Shape : public Base, protected util::Tagged<T> {
public:
    Shape() : area_(0) {}
    explicit Shape(double area);
    ~Shape();
    virtual double area() const = 0;
    static Shape *make(int kind);
    template <class V> void accept(V &visitor);
    bool operator==(const Shape &other) const = default;
    friend void swap(Shape &a, Shape &b);
    static constexpr int kSides = 0;
    int (*callback)(int);

    struct Bounds {
        double w, h;
        double diag() const { return std::sqrt(w * w + h * h); }
    };

private:
    double area_;
};

enum class Color : int { Red, Green };
using Shapes = std::vector<Shape<double> *>;
constexpr double kPi = 3.14159;
}  // namespace geo

namespace geo::io {
[[nodiscard]] bool save(const char *path);
}

void geo::Shape::draw(Canvas &canvas) {
    auto *s = new Circle(1.0);
    canvas.begin();
    this->render(canvas);
    s->release();
    geo::detail::clamp(3);
    std::max<int>(1, 2);
}

geo::Shape::~Shape() {}

/// Larger of two.
template <typename T>
T larger(T a, T b) {
    return a > b ? a : b;
}

[[nodiscard]] inline int answer() { return 42; }

struct Circle final : Shape<double> {
    double area() const override { return kPi; }
};
"#;

#[test]
fn cpp_definitions_kinds_names_parents_and_lines() {
    let ex = run("src/geo/shape.cpp", SHAPE);
    assert!(!ex.has_errors);
    use NodeKind::*;
    let f = "src/geo/shape.cpp";
    let geo = "src.geo.shape.geo";
    let shape = "src.geo.shape.geo.Shape";
    assert_eq!(
        outline(&ex),
        vec![
            (Module, "src.geo.shape.geo", f, 7, 39),
            (Module, "src.geo.shape.geo.detail", geo, 8, 10),
            (
                Function,
                "src.geo.shape.geo.detail.clamp",
                "src.geo.shape.geo.detail",
                9,
                9
            ),
            // The template line belongs to the class's range; the name line is reported.
            (Class, shape, geo, 14, 34),
            (Method, "src.geo.shape.geo.Shape.Shape", shape, 16, 16),
            (Method, "src.geo.shape.geo.Shape.Shape", shape, 17, 17),
            (Method, "src.geo.shape.geo.Shape.~Shape", shape, 18, 18),
            (Method, "src.geo.shape.geo.Shape.area", shape, 19, 19),
            (Method, "src.geo.shape.geo.Shape.make", shape, 20, 20),
            (Method, "src.geo.shape.geo.Shape.accept", shape, 21, 21),
            (Method, "src.geo.shape.geo.Shape.operator==", shape, 22, 22),
            (Constant, "src.geo.shape.geo.Shape.kSides", shape, 24, 24),
            (Class, "src.geo.shape.geo.Shape.Bounds", shape, 27, 30),
            (
                Method,
                "src.geo.shape.geo.Shape.Bounds.diag",
                "src.geo.shape.geo.Shape.Bounds",
                29,
                29
            ),
            (Enum, "src.geo.shape.geo.Color", geo, 36, 36),
            (Type, "src.geo.shape.geo.Shapes", geo, 37, 37),
            (Constant, "src.geo.shape.geo.kPi", geo, 38, 38),
            // `namespace geo::io` nests under `geo` by name.
            (Module, "src.geo.shape.geo.io", f, 41, 43),
            // Out-of-class definitions take their qualifier as scope.
            (Method, "src.geo.shape.geo.Shape.draw", f, 45, 52),
            (Method, "src.geo.shape.geo.Shape.~Shape", f, 54, 54),
            (Function, "src.geo.shape.larger", f, 58, 60),
            (Function, "src.geo.shape.answer", f, 62, 62),
            (Class, "src.geo.shape.Circle", f, 64, 66),
            (
                Method,
                "src.geo.shape.Circle.area",
                "src.geo.shape.Circle",
                65,
                65
            ),
        ]
    );
    let shape_idx = ex
        .nodes
        .iter()
        .position(|n| n.qualified_name == shape)
        .unwrap();
    assert_eq!(
        unique_node(&ex, "src.geo.shape.geo.Shape.make").parent,
        Some(shape_idx)
    );
    // Not definitions: a function-pointer member, data members, enumerators, free
    // function prototypes (a friend included), locals.
    for absent in ["callback", "area_", "w", "Red", "save", "swap", "s"] {
        assert!(
            ex.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn cpp_signatures_and_docs() {
    let ex = run("src/geo/shape.cpp", SHAPE);
    let sig = |q: &str| unique_node(&ex, q).signature.clone().unwrap();
    let doc = |q: &str| unique_node(&ex, q).docstring.clone();
    assert_eq!(
        sig("src.geo.shape.geo.Shape"),
        "template <typename T> class Shape : public Base, protected util::Tagged<T>"
    );
    assert_eq!(
        sig("src.geo.shape.geo.Shape.area"),
        "virtual double area() const = 0"
    );
    assert_eq!(
        sig("src.geo.shape.geo.Shape.accept"),
        "template <class V> void accept(V &visitor)"
    );
    assert_eq!(
        sig("src.geo.shape.geo.Shape.operator=="),
        "bool operator==(const Shape &other) const = default"
    );
    assert_eq!(
        sig("src.geo.shape.geo.Shape.kSides"),
        "static constexpr int kSides = 0"
    );
    assert_eq!(
        sig("src.geo.shape.geo.Shape.Bounds.diag"),
        "double diag() const"
    );
    assert_eq!(sig("src.geo.shape.geo.Color"), "enum class Color : int");
    assert_eq!(
        sig("src.geo.shape.geo.Shapes"),
        "using Shapes = std::vector<Shape<double> *>"
    );
    assert_eq!(sig("src.geo.shape.geo.io"), "namespace geo::io");
    assert_eq!(
        sig("src.geo.shape.geo.Shape.draw"),
        "void geo::Shape::draw(Canvas &canvas)"
    );
    assert_eq!(
        sig("src.geo.shape.larger"),
        "template <typename T> T larger(T a, T b)"
    );
    assert_eq!(
        sig("src.geo.shape.answer"),
        "[[nodiscard]] inline int answer()"
    );
    assert_eq!(
        sig("src.geo.shape.Circle"),
        "struct Circle final : Shape<double>"
    );
    // Docs sit above the template line.
    assert_eq!(
        doc("src.geo.shape.geo.Shape").as_deref(),
        Some("A drawable shape.")
    );
    assert_eq!(
        doc("src.geo.shape.larger").as_deref(),
        Some("Larger of two.")
    );
    // A comment trailing the previous line's code is not a doc.
    assert_eq!(doc("src.geo.shape.geo.io"), None);
    let shape = unique_node(&ex, "src.geo.shape.geo.Shape");
    assert!(SHAPE[shape.start_byte as usize..].starts_with("template <typename T>\nclass Shape"));
}

#[test]
fn cpp_references() {
    let ex = run("src/geo/shape.cpp", SHAPE);
    use RefKind::*;
    let f = "src/geo/shape.cpp";
    let draw = "src.geo.shape.geo.Shape.draw";
    assert_eq!(
        refs(&ex),
        vec![
            (f, Import, "", Some("vector"), None, 1),
            (f, Import, "", Some("geo/base.hpp"), None, 2),
            (f, Import, "*", Some("std"), None, 4),
            (f, Import, "Point", Some("geo"), None, 5),
            ("src.geo.shape.geo.Shape", Inherits, "Base", None, None, 14),
            // Template arguments are dropped from base names and callees.
            (
                "src.geo.shape.geo.Shape",
                Inherits,
                "util::Tagged",
                None,
                None,
                14
            ),
            (
                "src.geo.shape.geo.Shape.Bounds.diag",
                Call,
                "std::sqrt",
                None,
                None,
                29
            ),
            (draw, Call, "Circle", None, None, 46),
            // Parameters and locals are reported where a call first names them, with the
            // line of their declaration; `auto *s = new Circle(..)` is a `Circle`.
            (draw, Local, "canvas", Some("Canvas"), None, 45),
            (draw, Call, "canvas.begin", None, None, 47),
            (draw, Call, "this->render", None, None, 48),
            (draw, Local, "s", Some("Circle"), None, 46),
            (draw, Call, "s->release", None, None, 49),
            (draw, Call, "geo::detail::clamp", None, None, 50),
            (draw, Call, "std::max", None, None, 51),
            (
                "src.geo.shape.answer",
                Decorator,
                "nodiscard",
                None,
                None,
                62
            ),
            ("src.geo.shape.Circle", Inherits, "Shape", None, None, 64),
        ]
    );
}

#[test]
fn cpp_attributes_with_namespaces_and_specializations() {
    let src = "\
template <>
struct hash<Key> {
    [[gnu::always_inline]] size_t operator()(const Key &k) const { return k.id; }
};
";
    let ex = run("include/key.hpp", src);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Class, "include.key.hash", "include/key.hpp", 2, 4),
            (
                Method,
                "include.key.hash.operator()",
                "include.key.hash",
                3,
                3
            ),
        ]
    );
    let decorators: Vec<_> = ex
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Decorator)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(decorators, vec!["gnu::always_inline"]);
}

#[test]
fn cpp_syntax_errors_keep_the_definitions_around_them() {
    let src = "\
class Before { void ok() {} };
int broken( {
class After { void m() {} };
";
    let ex = run("src/err.cc", src);
    assert!(ex.has_errors);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Class, "src.err.Before", "src/err.cc", 1, 1),
            (Method, "src.err.Before.ok", "src.err.Before", 1, 1),
            (Class, "src.err.After", "src/err.cc", 3, 3),
            (Method, "src.err.After.m", "src.err.After", 3, 3),
        ]
    );
}

#[test]
fn cpp_never_panics_on_fragments() {
    for src in [
        "",
        "namespace {",
        "namespace a::",
        "template <",
        "class : public {",
        "void ::() {}",
        "using = int;",
        "operator",
        "struct S { S(",
    ] {
        let ex = run("src/frag.cpp", src);
        assert_eq!(ex.nodes[0].kind, NodeKind::File);
    }
    // An anonymous namespace names no scope: its contents belong to the file.
    let ex = run("src/anon.cpp", "namespace { int f() { return 1; } }\n");
    assert_eq!(ex.nodes.len(), 2);
    assert_eq!(ex.nodes[1].qualified_name, "src.anon.f");
}

#[test]
fn cpp_fields_locals_and_references() {
    let src = "\
class Service {
    Repo *repo_;
    std::unique_ptr<Cache> cache_;
    std::vector<Item> items_;
    int count_;
    void run(const geo::Point &origin);
};

void Service::run(const geo::Point &origin) {
    auto a = std::make_shared<Repo>();
    auto b = make_repo();
    auto c = new Cache();
    Repo d(1);
    for (const Item &item : items_) item.check();
    auto f = [](Worker &w) { w.work(); };
    origin.norm();
    a->save();
    b->save();
    c->get();
    d.save();
    std::sort(items_.begin(), items_.end(), &Service::by_name);
    Lock guard(mutex_);
    guard.unlock();
}
";
    let ex = run("src/service.cpp", src);
    use RefKind::*;
    let (class, m) = ("src.service.Service", "src.service.Service.run");
    assert_eq!(
        refs(&ex),
        vec![
            // Data members with a class type; a smart pointer stands for its object.
            (class, Field, "repo_", Some("Repo"), None, 2),
            (class, Field, "cache_", Some("Cache"), None, 3),
            (class, Field, "items_", Some("std.vector"), None, 4),
            // `make_shared<Repo>()`, `new Cache()` and `Repo d(1)` construct their class.
            (m, Call, "std::make_shared", None, None, 10),
            (m, Call, "Repo", None, None, 10),
            (m, Call, "make_repo", None, None, 11),
            (m, Call, "Cache", None, None, 12),
            (m, Call, "Repo", None, None, 13),
            (m, Local, "item", Some("Item"), None, 14),
            (m, Call, "item.check", None, None, 14),
            (m, Local, "w", Some("Worker"), None, 15),
            (m, Call, "w.work", None, None, 15),
            (m, Local, "origin", Some("geo.Point"), None, 9),
            (m, Call, "origin.norm", None, None, 16),
            // `auto` takes the type of what the initializer makes, or the factory's name.
            (m, Local, "a", Some("Repo"), None, 10),
            (m, Call, "a->save", None, None, 17),
            (m, Local, "b", Some("make_repo()"), None, 11),
            (m, Call, "b->save", None, None, 18),
            (m, Local, "c", Some("Cache"), None, 12),
            (m, Call, "c->get", None, None, 19),
            (m, Local, "d", Some("Repo"), None, 13),
            (m, Call, "d.save", None, None, 20),
            (m, Call, "std::sort", None, None, 21),
            (m, Call, "items_.begin", None, None, 21),
            (m, Call, "items_.end", None, None, 21),
            (m, Reference, "Service::by_name", None, None, 21),
            // Read as a function declaration by the grammar, but a `Lock` built from
            // `mutex_`.
            (m, Call, "Lock", None, None, 22),
            (m, Local, "guard", Some("Lock"), None, 22),
            (m, Call, "guard.unlock", None, None, 23),
        ]
    );
}
