//! `cairn export` / `cairn import`: a project's global workflows and runs as JSON lines, to move them to another
//! machine or database. The first line is `{"cairn_export": 1, "schema_version": N}` (the last migration the
//! exporting database had); then one `{"workflow": {"file", "yaml"}}` line per workflow file of
//! `$CAIRN_HOME/workflows/`, and one `{"table", "row"}` line per row of the run tables (runs, node runs, event logs,
//! projects, the audit trail), each row's columns as they are in the database.
//!
//! An import checks the whole file first: its format, a schema no newer than this cairn's, and that no workflow file
//! it brings differs from one already there. Then it inserts every row in one transaction (a run that is already
//! there fails the import, and nothing is written), and then writes the workflow files (0644). Asset folders beside
//! the workflow files and repository workflows (`.roscoe/workflows/`, which travel with their repository) are not
//! part of an export.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cairn_store::Store;
use cairn_store::transfer::{Cell, TableRow};
use clap::Args;
use serde_json::{Map, Value, json};

use crate::home::cairn_home;

/// The format an export's first line names.
const FORMAT: i64 = 1;

/// `cairn export` options.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Database URL (`sqlite://PATH` or `postgres://…`). Default: the SQLite file `$CAIRN_HOME/cairn.db`.
    #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// Write to FILE (which must not exist yet) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `cairn import` options.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The export to read (`-` for stdin).
    pub file: PathBuf,
    /// Database URL (`sqlite://PATH` or `postgres://…`). Default: the SQLite file `$CAIRN_HOME/cairn.db`.
    #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// Print one JSON object (`{"workflows": N, "rows": {table: N}}`) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `cairn export`.
pub async fn export(args: ExportArgs) -> anyhow::Result<()> {
    let home = cairn_home();
    let url = args.database_url.unwrap_or_else(|| Store::default_url(&home));
    let store = Store::open(&url).await.context("cairn export needs its database")?;
    let rows = store.export_runs().await;
    store.close().await;
    let rows = rows.context("cairn export")?;
    let mut lines = vec![json!({"cairn_export": FORMAT, "schema_version": schema_version()})];
    let files = workflow_files(&home.join("workflows"))?;
    let runs = rows.iter().filter(|row| row.table == "workflow_runs").count();
    let summary = format!("{} workflow file(s), {runs} run(s), {} row(s) in all", files.len(), rows.len());
    for (file, yaml) in files {
        lines.push(json!({"workflow": {"file": file, "yaml": yaml}}));
    }
    lines.extend(rows.iter().map(|row| json!({"table": row.table, "row": row_json(row)})));
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    match args.output {
        Some(path) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .with_context(|| format!("cannot create {} (it must not exist yet)", path.display()))?;
            file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("exported {summary} to {}", path.display());
        }
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
            eprintln!("exported {summary}");
        }
    }
    Ok(())
}

/// Runs `cairn import`.
pub async fn import(args: ImportArgs) -> anyhow::Result<()> {
    let home = cairn_home();
    let lines = read_lines(&args.file)?;
    let export = parse(&lines).with_context(|| format!("{} is not a cairn export", args.file.display()))?;
    let folder = home.join("workflows");
    let mut new_files = Vec::new();
    for (file, yaml) in &export.workflows {
        let path = folder.join(file);
        match std::fs::read_to_string(&path) {
            Ok(existing) if existing == *yaml => {}
            Ok(_) => bail!("{} exists and differs from the export's {file}: move it away and import again", path.display()),
            Err(_) => new_files.push((path, yaml)),
        }
    }
    let url = args.database_url.unwrap_or_else(|| Store::default_url(&home));
    let store = Store::open(&url).await.context("cairn import needs its database")?;
    let imported = store.import_runs(&export.rows).await;
    store.close().await;
    imported.context("cairn import")?;
    if !new_files.is_empty() {
        std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    for (path, yaml) in &new_files {
        write_new(path, yaml)?;
    }
    let mut counts = Map::new();
    for row in &export.rows {
        let n = counts.entry(row.table.clone()).or_insert(json!(0));
        *n = json!(n.as_i64().unwrap_or(0) + 1);
    }
    if args.json {
        println!("{}", json!({"workflows": new_files.len(), "rows": counts}));
    } else {
        let runs = counts.get("workflow_runs").and_then(Value::as_i64).unwrap_or(0);
        println!("imported {runs} run(s) ({} rows) and {} workflow file(s)", export.rows.len(), new_files.len());
    }
    Ok(())
}

/// The newest migration this cairn knows.
fn schema_version() -> i64 {
    Store::known_migrations().last().map_or(0, |(version, _)| *version)
}

/// The `.yaml` / `.yml` files directly in `folder` (none when it does not exist), by name.
fn workflow_files(folder: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Ok(Vec::new()) };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_file() && (name.ends_with(".yaml") || name.ends_with(".yml")) && !name.starts_with('.') {
            let yaml = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            files.push((name, yaml));
        }
    }
    files.sort();
    Ok(files)
}

fn row_json(row: &TableRow) -> Value {
    let cells = row.cells.iter().map(|(column, cell)| {
        let value = match cell {
            Cell::Null => Value::Null,
            Cell::Int(n) => json!(n),
            Cell::Real(x) => json!(x),
            Cell::Text(text) => json!(text),
        };
        (column.clone(), value)
    });
    Value::Object(cells.collect())
}

/// What an export holds.
struct Export {
    workflows: Vec<(String, String)>,
    rows: Vec<TableRow>,
}

fn read_lines(file: &Path) -> anyhow::Result<Vec<String>> {
    let read = |reader: &mut dyn BufRead| reader.lines().collect::<Result<Vec<_>, _>>();
    let lines = if file == Path::new("-") {
        read(&mut std::io::stdin().lock())
    } else {
        let opened = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        read(&mut std::io::BufReader::new(opened))
    };
    lines.with_context(|| format!("cannot read {}", file.display()))
}

fn parse(lines: &[String]) -> anyhow::Result<Export> {
    let mut lines = lines.iter().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, first)) = lines.next() else { bail!("it is empty") };
    let header: Value = serde_json::from_str(first).context("line 1 is not JSON")?;
    if header["cairn_export"] != json!(FORMAT) {
        bail!("line 1 is not {{\"cairn_export\": {FORMAT}, …}}: make the file with `cairn export`");
    }
    let version = header["schema_version"].as_i64().context("line 1 has no schema_version")?;
    if version > schema_version() {
        bail!("it comes from a newer cairn (schema {version}; this one knows up to {}): upgrade cairn first", schema_version());
    }
    let mut export = Export { workflows: Vec::new(), rows: Vec::new() };
    for (i, line) in lines {
        let at = || format!("line {}", i + 1);
        let value: Value = serde_json::from_str(line).with_context(|| format!("{} is not JSON", at()))?;
        if let Some(workflow) = value.get("workflow") {
            let file = workflow["file"].as_str().with_context(|| format!("{}: a workflow needs a file name", at()))?;
            let plain = !file.starts_with('.') && !file.contains(['/', '\\']) && (file.ends_with(".yaml") || file.ends_with(".yml"));
            if !plain {
                bail!("{}: '{file}' is not a workflow file name (NAME.yaml, no folder)", at());
            }
            let yaml = workflow["yaml"].as_str().with_context(|| format!("{}: a workflow needs its yaml", at()))?;
            export.workflows.push((file.to_owned(), yaml.to_owned()));
        } else if let (Some(table), Some(Value::Object(row))) = (value["table"].as_str(), value.get("row")) {
            let cells = row.iter().map(|(column, value)| Ok((column.clone(), cell(value).with_context(at)?)));
            export.rows.push(TableRow { table: table.to_owned(), cells: cells.collect::<anyhow::Result<_>>()? });
        } else {
            bail!("{} is neither a workflow nor a table row", at());
        }
    }
    Ok(export)
}

fn cell(value: &Value) -> anyhow::Result<Cell> {
    Ok(match value {
        Value::Null => Cell::Null,
        Value::String(text) => Cell::Text(text.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(n) => Cell::Int(n),
            None => Cell::Real(n.as_f64().context("a number out of range")?),
        },
        other => bail!("a row holds {other}, which is not a column value"),
    })
}

/// Writes a new workflow file (0644) through a temp file and a rename.
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    let temp = path.with_extension("import.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o644))?;
    }
    std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))
}
