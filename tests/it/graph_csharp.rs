//! C# call-graph resolution: `using` directives, aliases and `using static`, block and
//! file-scoped namespaces, inheritance, members through `this` and implicit `this`, typed
//! parameters, fields, properties and locals, shadowing, the standard library and method
//! groups passed as delegates, on fixture repositories.

use crate::common::graph::{graph, Graph};

const STORE: &str = r#"namespace Acme.Store
{
    public class Repository
    {
        public void Save(object o) { }
        public object Find(string id) { return null; }
    }

    public class Archive
    {
        public object Find(string id) { return null; }
    }

    public interface INamed
    {
        string Name();
    }

    public interface IAuditable : INamed
    {
        void Audit(string what);
    }

    public abstract class BaseService : IAuditable
    {
        protected Repository Repo { get; } = new Repository();

        public void Audit(string what) { }

        public void Log(string message) { }

        public string Name() => "base";
    }
}
"#;

const UTIL: &str = r#"namespace Acme.Util;

public static class Strings
{
    public static string Trim(string s) => s;
}

public static class Formats
{
    public static string Pretty(string s) => s;
}
"#;

const TEXT: &str = r#"namespace Acme.Text;

public static class Strings
{
    public static string Trim(string s) => s;
}

/// Same names as the standard library's.
public class Console
{
    public static void WriteLine(string s) { }
    public void Add(string s) { }
}
"#;

const CORE: &str = r#"namespace Acme
{
    public static class Guard
    {
        public static void NotNull(object o) { }
    }
}
"#;

const MODEL: &str = r#"namespace Acme.App
{
    public record Order(string Id, Customer Customer)
    {
        public int Total() => 0;
    }

    public class Customer
    {
        public void Greet() { }
    }

    class Validator
    {
        public void Check(Order order) { }
    }

    class AuditTrail
    {
        public void Record(Order order) { }
    }
}
"#;

const SERVICE: &str = r#"using System;
using System.Collections.Generic;
using Acme.Store;
using Acme.Util;
using TextStrings = Acme.Text.Strings;
using static Acme.Util.Formats;

namespace Acme.App
{
    public class OrderService : BaseService
    {
        private readonly Repository _backup;
        private readonly Validator validator = new Validator();

        public OrderService(Repository backup) : base()
        {
            _backup = backup;
        }

        public void Place(Order order, List<string> tags)
        {
            Audit("place");
            this.Log("placing");
            Repo.Save(order);
            _backup.Find(order.Id);
            validator.Check(order);
            var trail = new AuditTrail();
            trail.Record(order);
            Validator v = new();
            v.Check(order);
            tags.Add("placed");
            Console.WriteLine(Strings.Trim(order.Id));
            TextStrings.Trim("x");
            Pretty("x");
            tags.ForEach(Notify);
            _backup?.Save(order);
            order.Customer.Greet();
            Guard.NotNull(order);
        }

        void Notify(string tag) { }

        void Restore(Archive _backup)
        {
            _backup.Find("1");
        }

        void Render(Action Notify)
        {
            Notify();
        }
    }
}
"#;

fn shop() -> Graph {
    graph(&[
        ("src/Store/Store.cs", STORE),
        ("src/Util/Util.cs", UTIL),
        ("src/Text/Text.cs", TEXT),
        ("src/Core.cs", CORE),
        ("src/App/Model.cs", MODEL),
        ("src/App/OrderService.cs", SERVICE),
    ])
}

const PLACE: &str = "Acme.App.OrderService.Place";

#[test]
fn usings_aliases_and_using_static() {
    let g = shop();
    let file = "src/App/OrderService.cs";
    // A namespace import is an edge to the namespace's node, or to the files of a
    // file-scoped namespace.
    g.edge(file, "imports", "Acme.Store");
    g.edge(file, "imports", "src/Util/Util.cs");
    g.edge(file, "imports", "Acme.Util.Formats");
    g.edge(file, "imports", "Acme.Text.Strings");
    assert_eq!(g.miss(file, "System").reason, "external");
    // The alias names Text's `Strings`, the namespace import Util's.
    let e = g.edge(PLACE, "calls", "Acme.Text.Strings.Trim");
    assert_eq!(e.strategy, "import");
    let e = g.edge(PLACE, "calls", "Acme.Util.Strings.Trim");
    assert_eq!(e.strategy, "star_import");
    assert!((e.confidence - 0.8).abs() < 1e-9, "{e:?}");
    // `using static` brings in the members of a type.
    g.edge(PLACE, "calls", "Acme.Util.Formats.Pretty");
    // An enclosing namespace of `Acme.App`.
    let e = g.edge(PLACE, "calls", "Acme.Guard.NotNull");
    assert_eq!(e.strategy, "namespace");
}

#[test]
fn each_same_named_class_is_called_once() {
    let g = shop();
    let trims: Vec<_> = g
        .edges
        .iter()
        .filter(|e| e.source == PLACE && e.target.ends_with(".Trim"))
        .map(|e| (e.target.as_str(), e.line))
        .collect();
    assert_eq!(
        trims,
        [
            ("Acme.Text.Strings.Trim", 33),
            ("Acme.Util.Strings.Trim", 32)
        ]
    );
}

#[test]
fn inheritance_and_inherited_members() {
    let g = shop();
    g.edge(
        "Acme.App.OrderService",
        "inherits",
        "Acme.Store.BaseService",
    );
    g.edge(
        "Acme.Store.BaseService",
        "implements",
        "Acme.Store.IAuditable",
    );
    g.edge("Acme.Store.IAuditable", "inherits", "Acme.Store.INamed");
    let e = g.edge(PLACE, "calls", "Acme.Store.BaseService.Audit");
    assert_eq!(e.strategy, "member");
    g.no_edge(PLACE, "calls", "Acme.Store.IAuditable.Audit");
    let e = g.edge(PLACE, "calls", "Acme.Store.BaseService.Log");
    assert_eq!(e.strategy, "self");
    // `: base()` calls the base's implicit constructor (it declares none): no edge, and
    // none to the class.
    let ctor = "Acme.App.OrderService.OrderService";
    g.no_edge(ctor, "calls", "Acme.Store.BaseService");
    assert_eq!(g.miss(ctor, "base").reason, "external");
}

#[test]
fn typed_fields_properties_parameters_and_locals() {
    let g = shop();
    // An inherited property.
    let e = g.edge(PLACE, "calls", "Acme.Store.Repository.Save");
    assert_eq!(e.strategy, "type_annotation");
    // A field, also through `?.`.
    g.edge(PLACE, "calls", "Acme.Store.Repository.Find");
    assert_eq!(
        g.find(PLACE, "calls", "Acme.Store.Repository.Save").len(),
        2
    );
    g.edge(PLACE, "calls", "Acme.App.Validator.Check");
    let e = g.edge(PLACE, "calls", "Acme.App.AuditTrail.Record");
    assert_eq!(e.strategy, "inferred_type");
    // A record's positional property, named like its type.
    g.edge(PLACE, "calls", "Acme.App.Customer.Greet");
}

#[test]
fn instantiation_including_target_typed_new() {
    let g = shop();
    g.edge(PLACE, "calls", "Acme.App.AuditTrail");
    // `Validator v = new();` and the field initializer.
    let lines: Vec<i64> = g
        .find(PLACE, "calls", "Acme.App.Validator")
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(lines, [29]);
    g.edge("Acme.App.OrderService", "calls", "Acme.App.Validator");
    g.edge("Acme.Store.BaseService", "calls", "Acme.Store.Repository");
}

#[test]
fn parameters_shadow_fields_and_methods() {
    let g = shop();
    let restore = "Acme.App.OrderService.Restore";
    g.edge(restore, "calls", "Acme.Store.Archive.Find");
    g.no_edge(restore, "calls", "Acme.Store.Repository.Find");
    let render = "Acme.App.OrderService.Render";
    g.no_edge(render, "calls", "Acme.App.OrderService.Notify");
    assert_eq!(g.miss(render, "Notify").reason, "local");
}

#[test]
fn standard_library_calls_are_external() {
    let g = shop();
    for name in ["tags.Add", "Console.WriteLine", "tags.ForEach"] {
        assert_eq!(g.miss(PLACE, name).reason, "external", "{name}");
    }
    g.no_edge(PLACE, "calls", "Acme.Text.Console.WriteLine");
    g.no_edge(PLACE, "calls", "Acme.Text.Console.Add");
    g.no_edge(PLACE, "calls", "Acme.Text.Console");
}

#[test]
fn method_groups_are_references() {
    let g = shop();
    let e = g.edge(PLACE, "references", "Acme.App.OrderService.Notify");
    assert_eq!(e.strategy, "member");
    // Plain values passed as arguments are not references.
    assert!(
        g.targets(PLACE, "references") == ["Acme.App.OrderService.Notify"],
        "{}",
        g.describe()
    );
}

#[test]
fn unresolved_and_ambiguous_names() {
    let g = graph(&[
        (
            "A/Animals.cs",
            "namespace A\n{\n    class Cat { public void Speak() { } }\n    class Dog { public void Speak() { } }\n}\n",
        ),
        (
            "B/Hidden.cs",
            "namespace B\n{\n    static class Hidden { public static void Run() { } }\n}\n",
        ),
        (
            "A/Zoo.cs",
            "namespace A\n{\n    class Zoo\n    {\n        object Pick() => null;\n        void Show()\n        {\n            Hidden.Run();\n            Nowhere();\n            Pick().Speak();\n        }\n    }\n}\n",
        ),
    ]);
    let show = "A.Zoo.Show";
    assert_eq!(g.miss(show, "Hidden.Run").reason, "not_found");
    g.no_edge(show, "calls", "B.Hidden.Run");
    assert_eq!(g.miss(show, "Nowhere").reason, "external");
    for t in ["A.Cat.Speak", "A.Dog.Speak"] {
        let e = g.edge(show, "calls", t);
        assert_eq!(e.strategy, "ambiguous");
        assert!((e.confidence - 0.25).abs() < 1e-9, "{e:?}");
    }
}

#[test]
fn overloads_are_chosen_by_argument_count_and_literal_types() {
    let g = graph(&[(
        "Log.cs",
        r#"namespace P
{
    public class Log
    {
        public void Write(string message) { }
        public void Write(int code) { }
        public void Write(string format, params object[] args) { }
        public void Flush(bool force = false) { }
    }

    class Job
    {
        void Run(Log log, object state)
        {
            log.Write("start");
            log.Write(7);
            log.Write("{0}", state);
            log.Write(state);
            log.Flush();
        }
    }
}
"#,
    )]);
    let lines = |target: &str| -> Vec<i64> {
        g.find("P.Job.Run", "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    assert_eq!(lines("P.Log.Write"), [15, 18]);
    assert_eq!(lines("P.Log.Write#2"), [16, 18]);
    assert_eq!(lines("P.Log.Write#3"), [17]);
    // A parameter with a default value may be left out.
    assert_eq!(lines("P.Log.Flush"), [19]);
}

const CHAIN: &str = r#"namespace Acme.Chain
{
    public class Base
    {
        public Base() { }
        public Base(int size) { }
        public Base(string name) { }
        public virtual void Save() { }
    }

    public class Mid : Base
    {
        public Mid() : base() { }
    }

    public class Child : Mid
    {
        public Child() : base() { }
        public override void Save() { base.Save(); }
    }

    public class Sized : Base
    {
        public Sized() : base(8) { }
        public Sized(string name) : base("sized") { }
    }

    public class Bare { }

    public class Kid : Bare
    {
        public Kid() : base() { }
        public void Save() { base.Save(); }
    }
}
"#;

#[test]
fn base_calls_land_on_the_constructor_and_method_of_the_base() {
    let g = graph(&[("src/Chain/Base.cs", CHAIN)]);
    let c = "Acme.Chain";
    // `: base(...)` is the base's constructor that the arguments fit, never the class.
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
    // Constructors are not inherited: `Child`'s `: base()` is `Mid`'s own.
    assert_eq!(
        g.targets(&format!("{c}.Child.Child"), "calls"),
        [format!("{c}.Mid.Mid")]
    );
    // `base.Save()` is inherited through `Mid`.
    let e = g.edge(
        &format!("{c}.Child.Save"),
        "calls",
        &format!("{c}.Base.Save"),
    );
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "super"));
    // A base with neither: the implicit constructor, and no `Save` to call.
    for kid in ["Kid.Kid", "Kid.Save"] {
        let kid = format!("{c}.{kid}");
        assert!(
            g.targets(&kid, "calls").is_empty(),
            "{kid}\n{}",
            g.describe()
        );
    }
    assert_eq!(g.miss(&format!("{c}.Kid.Kid"), "base").reason, "external");
    assert_eq!(
        g.miss(&format!("{c}.Kid.Save"), "base.Save").reason,
        "not_found"
    );
}
