//! Call-graph resolution for C++: classes declared in headers with their methods defined
//! out of line in other files (`void Shape::draw() {..}`), namespaces open across files,
//! `this->`, implicit members and inherited methods, typed parameters, locals and fields
//! (smart pointers included), `using` declarations, and the translation-unit rules of C.

use crate::common::graph::{graph, Graph};

const SHAPE_HPP: &str = r#"#pragma once
#include <vector>

namespace geo {
class Canvas;

#define GEO_CHECK(x) ((void)(x))

class Shape {
public:
    virtual ~Shape();
    virtual double area() const = 0;
    void draw(Canvas &canvas);
    void describe();

protected:
    void log(const char *msg);
};
}  // namespace geo
"#;

const SHAPE_CPP: &str = r#"#include <cstdio>
#include "geo/shape.hpp"
#include "geo/canvas.hpp"

namespace geo {
void Shape::draw(Canvas &canvas) {
    canvas.line(0, 0);
    this->log("draw");
    describe();
}

void Shape::describe() { log("shape"); }

void Shape::log(const char *msg) { std::puts(msg); }
}  // namespace geo
"#;

const CANVAS_HPP: &str = r#"#pragma once
namespace geo {
class Canvas {
public:
    void line(int x, int y) {}
    void flush();
};
}  // namespace geo
"#;

const CANVAS_CPP: &str = r#"#include "geo/canvas.hpp"

void geo::Canvas::flush() {}
"#;

const CIRCLE_HPP: &str = r#"#pragma once
#include "geo/shape.hpp"

namespace geo {
class Circle : public Shape {
public:
    explicit Circle(double r);
    double area() const override;
    void render();

private:
    double r_;
};

Circle *make_default();
}  // namespace geo
"#;

const CIRCLE_CPP: &str = r#"#include "geo/circle.hpp"

namespace geo {
Circle::Circle(double r) : r_(r) {}

double Circle::area() const { return 3.14 * r_ * r_; }

void Circle::render() {
    log("render");
    this->describe();
}

Circle *make_default() { return new Circle(1.0); }
}  // namespace geo

using std::max;

double bigger(double a, double b) { return max(a, b); }
"#;

const REPO_HPP: &str = r#"#pragma once
class Repo {
public:
    void save();
};
"#;

const REPO_CPP: &str = r#"#include "repo.hpp"

void Repo::save() {}
"#;

const SERVICE_HPP: &str = r#"#pragma once
#include <memory>
#include "app/repo.hpp"

namespace app {
class Service {
public:
    void run();
    void handle(void (*notify)());
    static bool compare(int a, int b);

private:
    Repo *repo_;
    std::unique_ptr<Repo> backup_;
};
}  // namespace app
"#;

const SERVICE_CPP: &str = r#"#include "app/service.hpp"
#include "geo/circle.hpp"
#include "util/text.hpp"

using geo::Circle;

namespace app {
static void save() {}

static void on_event() {}

bool Service::compare(int a, int b) { return a < b; }

void Service::run() {
    repo_->save();
    this->backup_->save();
    Circle c(2.0);
    c.render();
    auto *s = new geo::Circle(1.0);
    s->area();
    std::vector<int> v;
    v.push_back(1);
    auto r = std::make_unique<Repo>();
    r->save();
    save();
    util::parse("x");
    other::parse("y");
    geo::make_default();
    mystery();
    lookup()->process();
    std::sort(v.begin(), v.end(), &Service::compare);
    register_callback(on_event);
}

void Service::handle(void (*notify)()) {
    notify();
    GEO_CHECK(0);
    Repo copy(notify);
    copy.save();
}
}  // namespace app
"#;

const TEXT_HPP: &str = r#"#pragma once
namespace util {
int parse(const char *text);
}
"#;

const TEXT_CPP: &str = r#"#include "util/text.hpp"

namespace util {
int parse(const char *text) { return 1; }
}
"#;

const OTHER_CPP: &str = r#"namespace other {
int parse(const char *text) { return 2; }
}

void notify() {}

void puts(const char *s) {}

class Buffer {
public:
    void push_back(int x) {}
};

class Reader {
public:
    void process();
};

class Writer {
public:
    void process();
};

void Reader::process() {}

void Writer::process() {}

double max(double a, double b) { return a; }

using namespace geo;

void use_geo() { make_default(); }
"#;

fn repo() -> Graph {
    graph(&[
        ("include/geo/shape.hpp", SHAPE_HPP),
        ("include/geo/canvas.hpp", CANVAS_HPP),
        ("include/geo/circle.hpp", CIRCLE_HPP),
        ("src/geo/shape.cpp", SHAPE_CPP),
        ("src/geo/canvas.cpp", CANVAS_CPP),
        ("src/geo/circle.cpp", CIRCLE_CPP),
        ("src/app/repo.hpp", REPO_HPP),
        ("src/app/repo.cpp", REPO_CPP),
        ("src/app/service.hpp", SERVICE_HPP),
        ("src/app/service.cpp", SERVICE_CPP),
        ("src/util/text.hpp", TEXT_HPP),
        ("src/util/text.cpp", TEXT_CPP),
        ("src/other/other.cpp", OTHER_CPP),
    ])
}

const RUN: &str = "src.app.service.app.Service.run";

/// The edges of `source` written on `line`, as (kind, target).
fn at_line<'a>(g: &'a Graph, source: &str, line: i64) -> Vec<(&'a str, &'a str)> {
    let mut v: Vec<_> = g
        .edges
        .iter()
        .filter(|e| e.source == source && e.line == line)
        .map(|e| (e.kind.as_str(), e.target.as_str()))
        .collect();
    v.sort();
    v
}

#[test]
fn cpp_methods_defined_out_of_line_belong_to_the_class_in_the_header() {
    let g = repo();
    let draw = "src.geo.shape.geo.Shape.draw";
    // `this->log(..)` and `describe()` land on the definitions in shape.cpp, not on the
    // declarations in the class in shape.hpp.
    let e = g.edge(draw, "calls", "src.geo.shape.geo.Shape.log");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "self"));
    let e = g.edge(draw, "calls", "src.geo.shape.geo.Shape.describe");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "member"));
    g.no_edge(draw, "calls", "include.geo.shape.geo.Shape.log");
    g.no_edge(draw, "calls", "include.geo.shape.geo.Shape.describe");
    g.edge(
        "src.geo.shape.geo.Shape.describe",
        "calls",
        "src.geo.shape.geo.Shape.log",
    );
    // An inline method has no other definition: the class's own is the target.
    let e = g.edge(draw, "calls", "include.geo.canvas.geo.Canvas.line");
    assert_eq!(
        (e.confidence, e.strategy.as_str()),
        (0.85, "type_annotation")
    );
}

#[test]
fn cpp_inheritance_and_inherited_members() {
    let g = repo();
    let e = g.edge(
        "include.geo.circle.geo.Circle",
        "inherits",
        "include.geo.shape.geo.Shape",
    );
    assert_eq!(e.strategy, "include");
    let render = "src.geo.circle.geo.Circle.render";
    // `log(..)` through the implicit `this`, `this->describe()`: both defined by the base
    // class, out of line in shape.cpp.
    let e = g.edge(render, "calls", "src.geo.shape.geo.Shape.log");
    assert_eq!(e.strategy, "member");
    let e = g.edge(render, "calls", "src.geo.shape.geo.Shape.describe");
    assert_eq!(e.strategy, "self");
    assert_eq!(g.targets(render, "calls").len(), 2);
}

#[test]
fn cpp_typed_parameters_locals_and_fields() {
    let g = repo();
    let save = "src.app.repo.Repo.save";
    // `repo_->save()`: a field (`Repo *repo_`) named without `this->`;
    // `this->backup_->save()`: a `std::unique_ptr<Repo>` field.
    assert_eq!(at_line(&g, RUN, 15), [("calls", save)]);
    assert_eq!(at_line(&g, RUN, 16), [("calls", save)]);
    // `Circle c(2.0); c.render();` (the name imported by `using geo::Circle`).
    assert_eq!(
        at_line(&g, RUN, 18),
        [("calls", "src.geo.circle.geo.Circle.render")]
    );
    // `auto *s = new geo::Circle(1.0); s->area();`
    let e = g.edge(RUN, "calls", "src.geo.circle.geo.Circle.area");
    assert_eq!((e.confidence, e.line), (0.85, 20));
    // `auto r = std::make_unique<Repo>(); r->save();`
    assert_eq!(at_line(&g, RUN, 24), [("calls", save)]);
    g.no_edge(RUN, "calls", "include.geo.circle.geo.Circle.area");
}

#[test]
fn cpp_instantiations_are_calls_of_the_class() {
    let g = repo();
    let circle = "include.geo.circle.geo.Circle";
    // `Circle c(2.0);` and `new geo::Circle(1.0)`.
    let lines: Vec<i64> = g
        .find(RUN, "calls", circle)
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(lines, [17, 19]);
    // `std::make_unique<Repo>()` makes a `Repo`; `std::make_unique` itself is the library's.
    g.edge(RUN, "calls", "src.app.repo.Repo");
    assert_eq!(g.miss(RUN, "std::make_unique").reason, "external");
    g.edge("src.geo.circle.geo.make_default", "calls", circle);
}

#[test]
fn cpp_namespaces_keep_same_named_functions_apart() {
    let g = repo();
    // `util::parse` is declared in an included header and defined beside it;
    // `other::parse` is found by its qualified name alone.
    let e = g.edge(RUN, "calls", "src.util.text.util.parse");
    assert_eq!((e.line, e.strategy.as_str()), (26, "include"));
    let e = g.edge(RUN, "calls", "src.other.other.other.parse");
    assert_eq!(
        (e.line, e.confidence, e.strategy.as_str()),
        (27, 0.8, "namespace")
    );
    assert_eq!(
        at_line(&g, RUN, 26),
        [("calls", "src.util.text.util.parse")]
    );
    assert_eq!(
        at_line(&g, RUN, 27),
        [("calls", "src.other.other.other.parse")]
    );
    // Declared in circle.hpp, defined in circle.cpp.
    let e = g.edge(RUN, "calls", "src.geo.circle.geo.make_default");
    assert_eq!(e.strategy, "header_pair");
    // `save()` is the namespace's own function, not the method of `Repo`.
    assert_eq!(
        at_line(&g, RUN, 25),
        [("calls", "src.app.service.app.save")]
    );
}

#[test]
fn cpp_using_declarations_import_definitions() {
    let g = repo();
    let e = g.edge(
        "src/app/service.cpp",
        "imports",
        "include.geo.circle.geo.Circle",
    );
    assert_eq!(e.strategy, "using");
    g.edge("src/app/service.cpp", "imports", "include/geo/circle.hpp");
    assert_eq!(g.miss("include/geo/shape.hpp", "vector").reason, "external");
}

#[test]
fn cpp_using_binds_names_in_other_namespaces() {
    let g = repo();
    // `using std::max;` binds `max` to the library's, whatever the repository defines.
    g.no_edge("src.geo.circle.bigger", "calls", "src.other.other.max");
    assert_eq!(g.miss("src.geo.circle.bigger", "max").reason, "external");
    // `using namespace geo;` makes `make_default` reachable unqualified.
    let e = g.edge(
        "src.other.other.use_geo",
        "calls",
        "src.geo.circle.geo.make_default",
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "namespace"));
}

#[test]
fn cpp_parameters_shadow_functions() {
    let g = repo();
    let handle = "src.app.service.app.Service.handle";
    g.no_edge(handle, "calls", "src.other.other.notify");
    assert_eq!(g.miss(handle, "notify").reason, "local");
}

#[test]
fn cpp_macros_and_variables_built_from_arguments() {
    let g = repo();
    let handle = "src.app.service.app.Service.handle";
    // A macro defined inside a namespace is known by its bare name everywhere after it.
    let e = g.edge(handle, "calls", "include.geo.shape.geo.GEO_CHECK");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "include"));
    // `Repo copy(notify);` (which the grammar reads as a function declaration) builds a
    // `Repo` named `copy`.
    assert_eq!(at_line(&g, handle, 38), [("calls", "src.app.repo.Repo")]);
    assert_eq!(
        at_line(&g, handle, 39),
        [("calls", "src.app.repo.Repo.save")]
    );
}

#[test]
fn cpp_standard_library_calls_are_external() {
    let g = repo();
    // The repository's own `puts` and `Buffer::push_back` are never guessed.
    assert_eq!(
        g.miss("src.geo.shape.geo.Shape.log", "std::puts").reason,
        "external"
    );
    g.no_edge(
        "src.geo.shape.geo.Shape.log",
        "calls",
        "src.other.other.puts",
    );
    assert_eq!(g.miss(RUN, "v.push_back").reason, "external");
    g.no_edge(RUN, "calls", "src.other.other.Buffer.push_back");
    assert_eq!(g.miss(RUN, "std::sort").reason, "external");
}

#[test]
fn cpp_methods_and_functions_passed_as_values_are_references() {
    let g = repo();
    assert_eq!(
        g.targets(RUN, "references"),
        [
            "src.app.service.app.Service.compare",
            "src.app.service.app.on_event"
        ]
    );
}

#[test]
fn cpp_unknown_receivers_and_names() {
    let g = repo();
    // `lookup()->process()`: the receiver's type is unknown; two classes have `process`,
    // each declared in the class and defined out of line (`#2`, later in the same file).
    for target in [
        "src.other.other.Reader.process#2",
        "src.other.other.Writer.process#2",
    ] {
        let e = g.edge(RUN, "calls", target);
        assert_eq!((e.confidence, e.strategy.as_str()), (0.25, "ambiguous"));
    }
    // Everything `run` calls, with nothing guessed onto a same-named definition.
    assert_eq!(
        g.targets(RUN, "calls"),
        [
            "include.geo.circle.geo.Circle",
            "src.app.repo.Repo",
            "src.app.repo.Repo.save",
            "src.app.service.app.save",
            "src.geo.circle.geo.Circle.area",
            "src.geo.circle.geo.Circle.render",
            "src.geo.circle.geo.make_default",
            "src.other.other.Reader.process#2",
            "src.other.other.Writer.process#2",
            "src.other.other.other.parse",
            "src.util.text.util.parse",
        ]
    );
    assert_eq!(g.miss(RUN, "mystery").reason, "external");
    assert_eq!(g.miss(RUN, "lookup").reason, "external");
}

const CHAIN_HPP: &str = r#"#pragma once

class Base {
public:
    explicit Base(int size);
    virtual void save();
};

class Mid : public Base {
public:
    Mid() : Base(1) {}
};

class Child : public Mid {
public:
    void save() override;
};

class Bare {};

class Kid : public Bare {
public:
    void save();
};
"#;

const CHAIN_CPP: &str = r#"#include "chain.hpp"

Base::Base(int size) {}

void Base::save() {}

void Child::save() { Base::save(); }

void Kid::save() { Bare::save(); }
"#;

#[test]
fn cpp_base_qualified_calls_land_on_the_method_of_the_base() {
    let g = graph(&[("src/chain.hpp", CHAIN_HPP), ("src/chain.cpp", CHAIN_CPP)]);
    // A base with a constructor named like it is still the class.
    g.edge("src.chain.Mid", "inherits", "src.chain.Base");
    g.edge("src.chain.Child", "inherits", "src.chain.Mid");
    g.no_edge("src.chain.Mid", "inherits", "src.chain.Base.Base");
    // `Base::save()` in a class derived through `Mid` is the base's method, defined out of
    // line.
    assert_eq!(
        g.targets("src.chain.Child.save", "calls"),
        ["src.chain.Base.save"]
    );
    // A base without `save`: not guessed onto the same-named methods of other classes.
    assert!(
        g.targets("src.chain.Kid.save", "calls").is_empty(),
        "{}",
        g.describe()
    );
    assert_eq!(
        g.miss("src.chain.Kid.save", "Bare::save").reason,
        "not_found"
    );
}
