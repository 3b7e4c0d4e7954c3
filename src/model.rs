//! Plain data passed between the pipeline stages: what extraction produces and the store keeps.

/// The kind of a definition node. Language constructs map onto this small, shared set
/// (a struct is a `Class`, a trait or protocol an `Interface`, a namespace a `Module`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    File,
    Module,
    Class,
    Interface,
    Enum,
    Type,
    Function,
    Method,
    Constant,
}

impl NodeKind {
    pub const ALL: [NodeKind; 9] = [
        NodeKind::File,
        NodeKind::Module,
        NodeKind::Class,
        NodeKind::Interface,
        NodeKind::Enum,
        NodeKind::Type,
        NodeKind::Function,
        NodeKind::Method,
        NodeKind::Constant,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::File => "File",
            NodeKind::Module => "Module",
            NodeKind::Class => "Class",
            NodeKind::Interface => "Interface",
            NodeKind::Enum => "Enum",
            NodeKind::Type => "Type",
            NodeKind::Function => "Function",
            NodeKind::Method => "Method",
            NodeKind::Constant => "Constant",
        }
    }

    /// Parses a kind name case-insensitively (`--kind method`).
    pub fn parse(s: &str) -> Option<NodeKind> {
        NodeKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
    }

    /// Kinds whose members are methods (a function nested directly in one is a `Method`).
    pub fn is_type_like(self) -> bool {
        matches!(
            self,
            NodeKind::Class | NodeKind::Interface | NodeKind::Enum | NodeKind::Type
        )
    }
}

/// What a raw reference site is. Resolution into edges happens later, from these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefKind {
    /// A call site; `name` is the callee text (`self.save`, `os.path.join`, `new Foo`).
    /// `module`, when set, lists the arguments comma-separated, each its type where the text
    /// shows it (a literal, a cast) or `_` (`String,_`; empty for none): it picks among
    /// overloads (Java, Kotlin, C#).
    Call,
    /// An import; `module` is what is imported from, `name` the imported item (if any).
    Import,
    /// A base class or extended type.
    Inherits,
    /// An implemented interface, trait or mixed-in module.
    Implements,
    /// A decorator, annotation or attribute applied to the definition.
    Decorator,
    /// A definition named as a value rather than called: a callback argument
    /// (`sorted(xs, key=by_name)`), a method reference (`this::run`).
    Reference,
    /// A parameter or local variable of the enclosing function; `module` holds its type as
    /// written (`Session`, `*Server`) or, for `x = make()`, the call's callee followed by `()`.
    /// Locals shadow outer names and give receivers a type.
    Local,
    /// A member variable of the enclosing class with its type, like `Local`: a typed field,
    /// or an assignment `self.session = Session()` inside a method (name `self.session`).
    Field,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Import => "import",
            RefKind::Inherits => "inherits",
            RefKind::Implements => "implements",
            RefKind::Decorator => "decorator",
            RefKind::Reference => "reference",
            RefKind::Local => "local",
            RefKind::Field => "field",
        }
    }

    pub fn parse(s: &str) -> Option<RefKind> {
        [
            RefKind::Call,
            RefKind::Import,
            RefKind::Inherits,
            RefKind::Implements,
            RefKind::Decorator,
            RefKind::Reference,
            RefKind::Local,
            RefKind::Field,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One definition found in a file. `parent` indexes into the same file's node list;
/// index 0 is always the file node itself.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractedNode {
    pub kind: NodeKind,
    pub name: String,
    pub qualified_name: String,
    pub parent: Option<usize>,
    pub signature: Option<String>,
    pub docstring: Option<String>,
    /// 1-based line of the definition's name (for decorated Python code, the `def` line).
    pub start_line: u32,
    pub end_line: u32,
    /// Byte range of the whole definition, decorators and annotations included.
    pub start_byte: u32,
    pub end_byte: u32,
}

/// A reference site inside a definition (`node` indexes the file's node list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRef {
    pub node: usize,
    pub kind: RefKind,
    pub name: String,
    pub module: Option<String>,
    pub alias: Option<String>,
    pub line: u32,
}

/// Everything extraction learns from one file: a pure function of (path, bytes, language).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileExtract {
    /// The qualified-name prefix of the file's definitions (its module or package).
    pub module: String,
    pub nodes: Vec<ExtractedNode>,
    pub refs: Vec<RawRef>,
    /// tree-sitter recovered from syntax errors somewhere in the file.
    pub has_errors: bool,
    /// Parsing took too long and was abandoned: only the file node is kept.
    pub timed_out: bool,
    /// The file's documentation declares it deprecated (`Rules::deprecated`).
    pub deprecated: bool,
}

/// One secret taken out of a file before it was parsed or stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    /// 1-based line where the secret starts.
    pub line: u32,
    pub kind: &'static str,
}
