//! Load test of `indexer serve --http` on a real corpus: CLIENTS concurrent clients issue
//! CALLS mixed tool calls over loopback (the stateless 2026-07-28 revision: one POST per
//! call), bounded in count and time. Checks every answer (no error, tokens within its
//! budget) and prints p50 and p99 latency per tool and the server's peak memory after the
//! warm-up and after the run.
//!
//!     cargo bench --bench mcp_load -- ~/.cache/indexer-corpora/django
//!
//! Environment: CLIENTS (default 8), CALLS (default 2000), WARMUP (the calls of the mix in
//! each round of the warm-up, default 200; rounds go on until one no longer grows the
//! server's resting heap by 1%, at most CALLS calls in all), LIMIT_S (default 600, the run's
//! time bound). The corpus is indexed first into a temporary cache (an existing index of it
//! there is reused), so the first run includes a cold index.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SEARCHES: &[&str] = &[
    "queryset filter",
    "reverse url",
    "csrf token",
    "cache get many",
    "model save",
    "form clean",
    "template render",
    "migration operation",
    "signal connect",
    "paginator page",
    "session middleware",
    "json serializer",
    "admin site register",
    "password hasher",
    "timezone now",
];

const TEXTS: &[&str] = &[
    "QuerySet.bulk_update() does not respect batch_size when it is larger than the database limit",
    "The admin changelist crashes when a list_filter refers to a reverse relation",
    "Migrations autodetector fails to detect a renamed model together with a renamed field",
    "Password reset email uses the wrong domain behind a proxy",
];

const SKELETON_PATHS: &[&str] = &[
    "django/db/models/",
    "django/http/",
    "django/forms/",
    "django/contrib/auth/",
    "django/core/cache/",
];

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn start(bin: &Path, corpus: &Path, cache: &Path) -> Server {
    let port = free_port();
    let mut child = Command::new(bin)
        .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--repo"])
        .arg(corpus)
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start indexer serve");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) => {
                eprintln!("{line}");
                if line.contains("listening on") {
                    break;
                }
            }
            _ => panic!("the server stopped before listening"),
        }
    }
    // Keep draining its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// One `tools/call`: the structured result, or why it failed.
fn call(
    agent: &ureq::Agent,
    url: &str,
    id: usize,
    tool: &str,
    args: &Value,
) -> Result<Value, String> {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": args,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "mcp_load", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let mut response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .send(body.to_string())
        .map_err(|e| format!("{tool}: {e}"))?;
    let text = response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .map_err(|e| format!("{tool}: {e}"))?;
    // A JSON body, or server-sent events whose data line holds the response.
    let payload = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: ")
                .filter(|d| d.contains("\"result\"") || d.contains("\"error\""))
        })
        .unwrap_or(&text);
    let v: Value =
        serde_json::from_str(payload).map_err(|e| format!("{tool}: {e}: {payload:.200}"))?;
    if let Some(e) = v.get("error") {
        return Err(format!("{tool}: {e}"));
    }
    let result = &v["result"];
    if result["isError"] == true {
        return Err(format!("{tool} {args}: {}", result["content"][0]["text"]));
    }
    Ok(result["structuredContent"].clone())
}

/// A field of the server's `/proc/PID/status`, in KiB (0 when unreadable).
fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn peak_rss_kb(pid: u32) -> u64 {
    status_kb(pid, "VmHWM:")
}

/// The server's resident memory now, anonymous (heap) and file-backed (mapped database
/// pages), in KiB.
fn rss_split_kb(pid: u32) -> (u64, u64) {
    (status_kb(pid, "RssAnon:"), status_kb(pid, "RssFile:"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn main() {
    let Some(corpus) = std::env::args().skip(1).find(|a| !a.starts_with('-')) else {
        eprintln!("usage: cargo bench --bench mcp_load -- CORPUS_DIR (e.g. ~/.cache/indexer-corpora/django)");
        return;
    };
    let corpus = PathBuf::from(corpus)
        .canonicalize()
        .expect("the corpus folder");
    let env_usize = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let clients = env_usize("CLIENTS", 8);
    let calls = env_usize("CALLS", 2000);
    let limit = Duration::from_secs(env_usize("LIMIT_S", 600) as u64);
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_indexer"));
    let cache = std::env::temp_dir().join("indexer-mcp-load-cache");
    let server = start(&bin, &corpus, &cache);
    let pid = server.child.id();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into();

    // Warm-up: every tool once, and the names and paths the mix uses.
    let mut names = Vec::new();
    let mut paths = Vec::new();
    for (i, q) in SEARCHES.iter().enumerate() {
        let r = call(
            &agent,
            &server.url,
            i,
            "search",
            &json!({"query": q, "limit": 5}),
        )
        .expect("warm-up search");
        for h in r["hits"].as_array().into_iter().flatten() {
            names.push(h["qualified_name"].as_str().unwrap_or_default().to_string());
            paths.push(h["path"].as_str().unwrap_or_default().to_string());
        }
    }
    names.sort();
    names.dedup();
    paths.sort();
    paths.dedup();
    assert!(!names.is_empty(), "the warm-up searches found nothing");
    let mix = Arc::new(Mix { names, paths });
    for i in 0..mix.kinds() {
        let (tool, args, _) = mix.pick(i, i);
        call(&agent, &server.url, i, tool, &args).expect("warm-up call");
    }
    // Then the mix itself, concurrently, in rounds of WARMUP calls until a round no longer
    // grows the resting heap (caches and allocator pages filling) by 1%: the memory after
    // that is the steady state the run is compared with.
    let round = env_usize("WARMUP", 200).max(1);
    let mut warmup = 0;
    let mut resting = rss_split_kb(pid).0;
    while warmup < calls {
        run_phase(&agent, &server.url, &mix, clients, round, warmup, limit);
        warmup += round;
        let now = rss_split_kb(pid).0;
        let settled = (now as f64) < resting as f64 * 1.01;
        resting = now;
        if settled {
            break;
        }
    }
    let warm_peak = peak_rss_kb(pid);
    let warm_split = rss_split_kb(pid);
    let started = Instant::now();
    let (samples, failures) = run_phase(&agent, &server.url, &mix, clients, calls, warmup, limit);
    let wall = started.elapsed();
    let run_peak = peak_rss_kb(pid);
    let run_split = rss_split_kb(pid);

    println!(
        "\n{} calls by {clients} clients in {:.1} s ({:.0} calls/s), {} failed",
        samples.len() + failures.len(),
        wall.as_secs_f64(),
        (samples.len() + failures.len()) as f64 / wall.as_secs_f64(),
        failures.len()
    );
    println!("\n| tool | calls | p50 ms | p99 ms |\n|---|---:|---:|---:|");
    let mut tools: Vec<&str> = samples.iter().map(|(t, _)| *t).collect();
    tools.sort();
    tools.dedup();
    for tool in tools {
        let mut ms: Vec<f64> = samples
            .iter()
            .filter(|(t, _)| *t == tool)
            .map(|(_, m)| *m)
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "| {tool} | {} | {:.1} | {:.1} |",
            ms.len(),
            percentile(&ms, 0.5),
            percentile(&ms, 0.99)
        );
    }
    println!(
        "\nserver peak RSS: {:.0} MB after a warm-up of {warmup} calls, {:.0} MB after the run ({:+.1}%)",
        warm_peak as f64 / 1024.0,
        run_peak as f64 / 1024.0,
        (run_peak as f64 / warm_peak.max(1) as f64 - 1.0) * 100.0
    );
    println!(
        "resident now: {:.0} MB heap + {:.0} MB mapped after warm-up, {:.0} + {:.0} MB after the run",
        warm_split.0 as f64 / 1024.0,
        warm_split.1 as f64 / 1024.0,
        run_split.0 as f64 / 1024.0,
        run_split.1 as f64 / 1024.0
    );
    for f in failures.iter().take(10) {
        println!("failure: {f}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}

type Samples = Vec<(&'static str, f64)>;

/// `calls` calls of the mix from `clients` threads, the `i`th call being the mix's
/// `offset + i`th: the latency of each answer, and every failure (an error, an answer over
/// its budget).
fn run_phase(
    agent: &ureq::Agent,
    url: &str,
    mix: &Arc<Mix>,
    clients: usize,
    calls: usize,
    offset: usize,
    limit: Duration,
) -> (Samples, Vec<String>) {
    let next = Arc::new(AtomicUsize::new(0));
    let samples: Arc<Mutex<Samples>> = Arc::default();
    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (next, samples, failures, mix, url) = (
                Arc::clone(&next),
                Arc::clone(&samples),
                Arc::clone(&failures),
                Arc::clone(mix),
                url.to_string(),
            );
            let agent = agent.clone();
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls || started.elapsed() > limit {
                    return;
                }
                let n = offset + i;
                let (tool, args, budget) = mix.pick(n, n / mix.kinds());
                let t = Instant::now();
                let outcome = call(&agent, &url, n + 1000, tool, &args);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                match outcome {
                    Ok(r) => {
                        let tokens = r["tokens"].as_u64().unwrap_or(0) as usize;
                        if tokens > budget {
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{tool}: {tokens} tokens over its budget {budget}"));
                        }
                        samples.lock().unwrap().push((tool, ms));
                    }
                    Err(e) => failures.lock().unwrap().push(e),
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("client thread");
    }
    let samples = std::mem::take(&mut *samples.lock().unwrap());
    let failures = std::mem::take(&mut *failures.lock().unwrap());
    (samples, failures)
}

/// The calls of the mix, in a fixed rotation: what an agent asks most (search, source,
/// traces) most often.
struct Mix {
    names: Vec<String>,
    paths: Vec<String>,
}

impl Mix {
    const ROTATION: &'static [&'static str] = &[
        "search",
        "get_source",
        "trace_callers",
        "search",
        "get_source",
        "trace_callees",
        "skeleton",
        "map",
        "get_file",
        "rank_files",
        "get_source",
        "search",
        "pack",
        "get_tree",
    ];

    fn kinds(&self) -> usize {
        Self::ROTATION.len()
    }

    /// The `i`th call: its tool, arguments and budget; `round` varies the arguments.
    fn pick(&self, i: usize, round: usize) -> (&'static str, Value, usize) {
        let tool = Self::ROTATION[i % Self::ROTATION.len()];
        let name = &self.names[(i * 7 + round) % self.names.len()];
        let path = &self.paths[(i * 3 + round) % self.paths.len()];
        match tool {
            "search" => (
                tool,
                json!({"query": SEARCHES[(i + round) % SEARCHES.len()]}),
                2000,
            ),
            "get_source" => (tool, json!({"qualified_name": name}), 4000),
            "trace_callers" | "trace_callees" => {
                (tool, json!({"qualified_name": name, "depth": 3}), 2000)
            }
            "skeleton" => (
                tool,
                json!({"path": SKELETON_PATHS[round % SKELETON_PATHS.len()], "budget_tokens": 4000}),
                4000,
            ),
            "map" => (
                tool,
                json!({"budget_tokens": 4000, "query": TEXTS[round % TEXTS.len()]}),
                4000,
            ),
            "get_file" => (tool, json!({"path": path}), 4000),
            "rank_files" => (tool, json!({"query": TEXTS[round % TEXTS.len()]}), 1000),
            "pack" => (tool, json!({"query": TEXTS[round % TEXTS.len()]}), 8000),
            _ => (tool, json!({"prefix": "django", "depth": 2}), 2000),
        }
    }
}
