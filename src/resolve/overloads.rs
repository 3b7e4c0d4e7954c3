//! Choosing among overloads (Java, Kotlin, C#). A call whose name reaches several methods
//! keeps those whose parameter list fits the arguments written: their number, and the types
//! of the arguments whose type shows in the text (literals, casts, `new T(...)`, string
//! concatenations). Extraction records the arguments of a call in the reference's `module`
//! as comma-separated types, `_` where unknown (`String,_` for `f("a", x)`, empty for `f()`).

use super::lookup::Found;
use super::symbols::Graph;

/// The parameters of a method, read from its signature.
#[derive(Debug, PartialEq)]
pub struct Params {
    /// Fewest arguments accepted (defaults and a variadic tail may be left out).
    pub min: u8,
    /// Most arguments accepted, `u8::MAX` when variadic.
    pub max: u8,
    /// Each parameter's type without type arguments (`List`, `String[]`, `int`), or "" when
    /// unreadable. A C# extension method's `this` parameter is not among them.
    pub types: Box<[Box<str>]>,
    /// The last parameter takes any number of arguments.
    pub variadic: bool,
}

/// Reads the parameter list of the method `name` from its signature; `None` when it cannot
/// be found (a truncated signature). Kotlin's secondary constructors say `constructor`.
pub fn parse(signature: &str, name: &str) -> Option<Params> {
    // Annotations and attributes are on lines of their own.
    let line = signature.rsplit('\n').next()?;
    let open = [name, "constructor"].iter().find_map(|n| {
        line.match_indices(n).find_map(|(i, _)| {
            let whole_word = !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            if !whole_word {
                return None;
            }
            let rest = line[i + n.len()..].trim_start();
            // Type parameters between the name and the list: `Foo<T>(`.
            let rest = match rest.strip_prefix('<') {
                Some(r) => r.split_once('>')?.1.trim_start(),
                None => rest,
            };
            rest.starts_with('(').then(|| line.len() - rest.len())
        })
    })?;
    // Split the list at top-level commas, keeping only top-level text (type arguments,
    // annotation arguments and default values go) and array brackets.
    let mut params: Vec<(String, bool)> = Vec::new();
    let mut current = String::new();
    let mut default = false;
    let mut depth = 0u32;
    let mut quote = None;
    let mut prev = ' ';
    let mut closed = false;
    for ch in line[open + 1..].chars() {
        if let Some(q) = quote {
            if ch == q && prev != '\\' {
                quote = None;
            }
            prev = ch;
            continue;
        }
        match ch {
            '"' | '\'' => quote = Some(ch),
            '[' if depth == 0 && !default && (prev == ']' || prev.is_alphanumeric()) => {
                current.push_str("[]");
                depth += 1;
            }
            '(' | '[' | '{' | '<' => depth += 1,
            '>' if prev == '-' || prev == '=' => {}
            ')' | ']' | '}' | '>' if depth > 0 => depth -= 1,
            ')' => {
                closed = true;
                break;
            }
            ',' if depth == 0 => {
                params.push((std::mem::take(&mut current), default));
                default = false;
            }
            '=' if depth == 0 => default = true,
            _ if depth == 0 && !default => current.push(ch),
            _ => {}
        }
        prev = ch;
    }
    if !closed {
        return None;
    }
    params.push((current, default));
    params.retain(|(p, _)| !p.trim().is_empty());
    let mut types = Vec::with_capacity(params.len());
    let (mut optional, mut variadic) = (0usize, false);
    for (i, (p, has_default)) in params.iter().enumerate() {
        let words: Vec<&str> = p
            .split_whitespace()
            .filter(|w| !w.starts_with('@'))
            .collect();
        if words.iter().any(|w| matches!(*w, "vararg" | "params")) || p.contains("...") {
            variadic = true;
        }
        // A C# extension method's receiver: matched in the `xs.Count(n)` form.
        if i == 0 && words.first() == Some(&"this") {
            continue;
        }
        if *has_default {
            optional += 1;
        }
        types.push(param_type(p, &words).into());
    }
    let n = types.len();
    let clamp = |n: usize| n.min(u8::MAX as usize - 1) as u8;
    let min = n - optional.min(n) - usize::from(variadic && optional < n);
    Some(Params {
        min: clamp(min),
        max: if variadic { u8::MAX } else { clamp(n) },
        types: types.into(),
        variadic,
    })
}

/// The type of one parameter: after the `:` in Kotlin (`name: Type`), otherwise every word
/// but the last (`final Map m`), modifiers left out.
fn param_type(p: &str, words: &[&str]) -> String {
    if let Some((_, ty)) = p.split_once(':') {
        return ty.trim().trim_end_matches('?').to_string();
    }
    let n = words.len().saturating_sub(1);
    words[..n]
        .iter()
        .filter(|w| {
            !matches!(
                **w,
                "final" | "vararg" | "params" | "ref" | "out" | "in" | "scoped"
            )
        })
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("...", "[]")
}

impl Params {
    pub fn accepts(&self, args: usize) -> bool {
        self.min as usize <= args && args <= self.max as usize
    }

    /// How well the arguments fit: `None` when one cannot be passed here; otherwise a
    /// method called without spreading arguments over a variadic tail first (as Java and
    /// C# prefer), then by how many arguments of a known type match exactly.
    fn rank(&self, args: &[&str]) -> Option<(bool, usize)> {
        let spread = self.variadic && args.len() != self.types.len();
        Some((!spread, self.fit(args)?))
    }

    /// Whether every argument of a known type fits, and how many fit exactly; `None` when
    /// one cannot be passed here.
    fn fit(&self, args: &[&str]) -> Option<usize> {
        let mut exact = 0;
        for (i, arg) in args.iter().enumerate() {
            if *arg == "_" {
                continue;
            }
            let last = self.types.len().checked_sub(1)?;
            let ty = &*self.types[i.min(last)];
            // Arguments to a variadic tail are its element type (or the array itself).
            let ty = if self.variadic && i >= last {
                match ty.strip_suffix("[]") {
                    Some(element) if args.len() != self.types.len() => element,
                    _ => ty,
                }
            } else {
                ty
            };
            if fits(arg, ty)? {
                exact += 1;
            }
        }
        Some(exact)
    }
}

/// Some(true) when an argument of type `arg` matches parameter type `param` exactly,
/// Some(false) when it can be passed by widening, boxing or to a supertype (as far as the
/// text tells), None when it cannot.
fn fits(arg: &str, param: &str) -> Option<bool> {
    let param = param.trim_start_matches("java.lang.");
    let (a, p) = (primitive(arg), primitive(param));
    // A type parameter (`T`) or the top type takes anything.
    let top = matches!(param, "Object" | "object" | "Any")
        || (param.len() == 1 && param.starts_with(|c: char| c.is_ascii_uppercase()));
    match (a, p) {
        (Some(a), Some(p)) if a == p => Some(true),
        (Some(a), Some(p)) => widens(a, p).then_some(false),
        _ if top => Some(false),
        (Some(Kind::String), None) => matches!(
            param,
            "CharSequence" | "Comparable" | "Serializable" | "Constable"
        )
        .then_some(false),
        (Some(_), None) => {
            matches!(param, "Number" | "Comparable" | "Serializable").then_some(false)
        }
        // A class (`new Foo()`, `(Foo) x`): the same name, or perhaps a supertype.
        (None, Some(_)) => None,
        (None, None) => {
            let a = arg.rsplit('.').next().unwrap_or(arg);
            let p = param.rsplit('.').next().unwrap_or(param);
            Some(a == p)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Byte,
    Short,
    Char,
    Int,
    Long,
    Float,
    Double,
    Decimal,
    Boolean,
    String,
}

/// The built-in value types, in Java, Kotlin and C# spelling.
fn primitive(ty: &str) -> Option<Kind> {
    Some(match ty {
        "byte" | "Byte" | "sbyte" => Kind::Byte,
        "short" | "Short" => Kind::Short,
        "char" | "Char" | "Character" => Kind::Char,
        "int" | "Int" | "Integer" | "Int32" => Kind::Int,
        "long" | "Long" | "Int64" => Kind::Long,
        "float" | "Float" | "Single" => Kind::Float,
        "double" | "Double" => Kind::Double,
        "decimal" | "Decimal" => Kind::Decimal,
        "boolean" | "Boolean" | "bool" => Kind::Boolean,
        "String" | "string" => Kind::String,
        _ => return None,
    })
}

/// Java's (and C#'s) implicit widening of numbers.
fn widens(from: Kind, to: Kind) -> bool {
    use Kind::*;
    match from {
        Byte => matches!(to, Short | Int | Long | Float | Double),
        Short | Char => matches!(to, Int | Long | Float | Double),
        Int => matches!(to, Long | Float | Double | Decimal),
        Long => matches!(to, Float | Double | Decimal),
        Float => to == Double,
        _ => false,
    }
}

/// Keeps the targets that accept as many arguments as `args` (as extracted) holds, and those
/// whose parameters are unknown.
pub fn accepting(g: &Graph, targets: &mut Vec<Found>, args: &str) {
    let n = if args.is_empty() {
        0
    } else {
        args.split(',').count()
    };
    targets.retain(|t| {
        g.node(t.node)
            .params
            .as_deref()
            .is_none_or(|p| p.accepts(n))
    });
}

/// Of several targets (overloads, or same-named methods guessed by name), keeps those whose
/// parameters fit the arguments (`args` as extracted) best; keeps them all when none fits.
pub fn narrow(g: &Graph, targets: &mut Vec<Found>, args: &str) {
    if targets.len() < 2 {
        return;
    }
    let args: Vec<&str> = if args.is_empty() {
        Vec::new()
    } else {
        args.split(',').collect()
    };
    let fit: Vec<Option<(bool, usize)>> = targets
        .iter()
        .map(|t| match g.node(t.node).params.as_deref() {
            Some(p) if !p.accepts(args.len()) => None,
            Some(p) => p.rank(&args),
            // Parameters unknown: it may fit, exactly by no measure.
            None => Some((true, 0)),
        })
        .collect();
    let Some(best) = fit.iter().flatten().max().copied() else {
        return;
    };
    let mut i = 0;
    targets.retain(|_| {
        let keep = fit[i] == Some(best);
        i += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(p: &Params) -> Vec<&str> {
        p.types.iter().map(|t| &**t).collect()
    }

    #[test]
    fn java_signatures() {
        let p = parse(
            "public static <T> void sort(T[] a, Comparator<? super T> c)",
            "sort",
        );
        let p = p.unwrap();
        assert_eq!((p.min, p.max), (2, 2));
        assert_eq!(types(&p), ["T[]", "Comparator"]);
        let p = parse("@Override\npublic StringBuilder append(char c)", "append").unwrap();
        assert_eq!(types(&p), ["char"]);
        let p = parse(
            "static String format(final String f, Object... args)",
            "format",
        )
        .unwrap();
        assert_eq!((p.min, p.max, p.variadic), (1, u8::MAX, true));
        assert_eq!(types(&p), ["String", "Object[]"]);
        let p = parse("public Order()", "Order").unwrap();
        assert_eq!((p.min, p.max), (0, 0));
        assert_eq!(parse("void cut(int a, int b…", "cut"), None);
    }

    #[test]
    fn kotlin_and_csharp_signatures() {
        let p = parse(
            "fun greet(name: String, loud: Boolean = false): String",
            "greet",
        )
        .unwrap();
        assert_eq!((p.min, p.max), (1, 2));
        assert_eq!(types(&p), ["String", "Boolean"]);
        // A function type takes no literal.
        let p = parse("fun run(block: (Int) -> Unit)", "run").unwrap();
        assert_eq!(p.fit(&["String"]), None);
        assert_eq!(p.fit(&["_"]), Some(0));
        let p = parse("constructor(id: Int) : this()", "Order").unwrap();
        assert_eq!(types(&p), ["Int"]);
        let p = parse(
            "public static int Count(this IEnumerable<int> xs, int n = 0)",
            "Count",
        );
        let p = p.unwrap();
        assert_eq!((p.min, p.max), (0, 1));
        assert_eq!(types(&p), ["int"]);
        let p = parse("void Log(string fmt, params object[] args)", "Log").unwrap();
        assert_eq!((p.min, p.max), (1, u8::MAX));
        let p = parse("T Get<T>([NotNull] string key)", "Get").unwrap();
        assert_eq!(types(&p), ["string"]);
    }

    #[test]
    fn arguments_fit_parameters() {
        let params = |sig: &str| parse(sig, "f").unwrap();
        let of_char = params("void f(char c)");
        let of_int = params("void f(int i)");
        let of_string = params("void f(String s)");
        let of_object = params("void f(Object o)");
        assert_eq!(of_char.fit(&["char"]), Some(1));
        assert_eq!(of_int.fit(&["char"]), Some(0));
        assert_eq!(of_string.fit(&["char"]), None);
        assert_eq!(of_object.fit(&["String"]), Some(0));
        assert_eq!(of_string.fit(&["_"]), Some(0));
        assert_eq!(params("void f(Foo x)").fit(&["Foo"]), Some(1));
        assert_eq!(params("void f(Foo x)").fit(&["int"]), None);
        assert_eq!(params("void f(int x)").fit(&["Foo"]), None);
        let varargs = params("void f(String fmt, Object... args)");
        assert_eq!(varargs.fit(&["String", "int", "String"]), Some(1));
    }
}
