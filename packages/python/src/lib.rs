//! `sessiondb._native`: the sessiondb library ([`sessiondb::SessionDb`]) inside a Python
//! process. The Python package (`python/sessiondb/`) wraps it: `Store` is this module's
//! class, `SessionStore` an async Agent SDK adapter over its `stream_*` methods.
//!
//! Every call releases the GIL while the database works (`Python::detach`), so other Python
//! threads, and an asyncio loop that awaits the call in a worker thread, keep running.
//! Answers are plain Python objects: the library's serde output converted value by value;
//! stored JSON text (messages, a stream's entries) is built into objects directly from the
//! text ([`pyjson`]), reading numbers as the library does for `messages` and as
//! `json.loads` does for the SessionStore protocol.
//! Errors raise `SessionDbError` (its subclass `SessionNotFoundError` for an unknown
//! session) with the message the CLI prints after `sessiondb: `.

mod pyjson;

use pyjson::Numbers;
use pyo3::exceptions::PyException;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use sessiondb::fork::ForkOptions;
use sessiondb::query::SessionFilter;
use sessiondb::resume::ResumeOptions;
use sessiondb::sdk::{MessageJson, StoredMessage};
use sessiondb::search::SearchQuery;
use sessiondb::streams::{self, StreamKey, SummaryPut};
use sessiondb::{Error, SessionDb};
use std::path::PathBuf;

pyo3::create_exception!(
    sessiondb,
    SessionDbError,
    PyException,
    "A sessiondb error, with the CLI's message."
);
pyo3::create_exception!(
    sessiondb,
    SessionNotFoundError,
    SessionDbError,
    "No stored session matches."
);

/// The error and its causes on one line, each said once (as the CLI prints it).
fn message(err: &Error) -> String {
    let mut text = String::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = next {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
        next = cause.source();
    }
    text
}

fn py_err(err: Error) -> PyErr {
    let text = message(&err);
    match err {
        Error::SessionNotFound(_) => SessionNotFoundError::new_err(text),
        _ => SessionDbError::new_err(text),
    }
}

/// A JSON value as Python objects (dict, list, str, int, float, bool, None).
fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A library answer as Python objects (through its serde form).
fn answer<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(value).map_err(|e| py_err(e.into()))?;
    to_py(py, &value)
}

/// Python objects as compact JSON text (Python's `json.dumps`; NaN refused).
fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let json = py.import("json")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("separators", (",", ":"))?;
    kwargs.set_item("allow_nan", false)?;
    let text = json.call_method("dumps", (value,), Some(&kwargs))?;
    Ok(text.extract::<String>()?.into_bytes())
}

/// Python's `json.loads` of JSON text the library produced.
fn loads<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let json = py.import("json")?;
    json.call_method1("loads", (PyBytes::new(py, text),))
}

/// Messages as the dicts `answer(py, &messages)` makes of the library's `messages()` (same
/// keys in the same order, same values), each `message` built by [`pyjson`] from its text
/// instead of parsed into a `serde_json::Value`, serialized into another and converted.
fn message_dicts<'py>(
    py: Python<'py>,
    messages: Vec<StoredMessage>,
) -> PyResult<Bound<'py, PyList>> {
    let mut dicts = Vec::with_capacity(messages.len());
    for m in messages {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "type"), m.kind)?;
        dict.set_item(intern!(py, "uuid"), m.uuid)?;
        dict.set_item(intern!(py, "session_id"), to_py(py, &m.session_id)?)?;
        let message = match m.message {
            MessageJson::Text(text) => {
                match pyjson::build(py, text.as_bytes(), Numbers::Library)? {
                    Some(built) => built,
                    // What serde_json refuses (a lone surrogate, deep nesting): the library's
                    // lenient reading.
                    None => to_py(py, &MessageJson::Text(text).into_value())?,
                }
            }
            MessageJson::Value(value) => to_py(py, &value)?,
        };
        dict.set_item(intern!(py, "message"), message)?;
        dict.set_item(intern!(py, "parent_tool_use_id"), m.parent_tool_use_id)?;
        dict.set_item(intern!(py, "parent_agent_id"), m.parent_agent_id)?;
        dicts.push(dict);
    }
    PyList::new(py, dicts)
}

/// JSON text of the SessionStore protocol (a stream's entries, summaries, a pending fold) as
/// `json.loads` reads it: built by [`pyjson`] with Python's numbers, or by `json.loads`
/// itself when that gives up.
fn protocol_json<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match pyjson::build(py, text, Numbers::Python)? {
        Some(built) => Ok(built),
        None => loads(py, text),
    }
}

fn key(project_key: String, session_id: String, subpath: Option<String>) -> StreamKey {
    StreamKey {
        project_key,
        session_id,
        subpath,
    }
}

/// An open sessiondb store: a SQLite file (created when missing) or a `postgres://` team
/// store. Safe to share between threads.
#[pyclass(frozen, module = "sessiondb")]
struct Store {
    db: SessionDb,
}

#[pymethods]
impl Store {
    #[new]
    fn new(py: Python<'_>, target: PathBuf) -> PyResult<Self> {
        let target = target.to_string_lossy().into_owned();
        let db = py.detach(|| SessionDb::open(&target)).map_err(py_err)?;
        Ok(Store { db })
    }

    /// What the store is called in messages: its path, or its URL without the password.
    fn __repr__(&self) -> String {
        format!("sessiondb.Store({:?})", self.db.shown())
    }

    /// Imports Claude Code transcripts under the paths; returns the import report.
    fn import_paths<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let report = py.detach(|| self.db.import(&paths)).map_err(py_err)?;
        answer(py, &report)
    }

    /// The stored sessions, newest first, as `sessiondb sessions --json` lists them.
    #[pyo3(signature = (*, project=None, project_contains=None, directory=None, tag=None,
        name=None, branch=None, since=None, until=None, limit=None, offset=None,
        include_hidden=false))]
    #[allow(clippy::too_many_arguments)]
    fn sessions<'py>(
        &self,
        py: Python<'py>,
        project: Option<String>,
        project_contains: Option<String>,
        directory: Option<String>,
        tag: Option<String>,
        name: Option<String>,
        branch: Option<String>,
        since: Option<i64>,
        until: Option<i64>,
        limit: Option<i64>,
        offset: Option<i64>,
        include_hidden: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = SessionFilter {
            project,
            project_contains,
            directory,
            tag,
            name,
            branch,
            since,
            until,
            limit,
            offset,
            include_hidden,
            ..Default::default()
        };
        let sessions = py.detach(|| self.db.sessions(&filter)).map_err(py_err)?;
        answer(py, &sessions)
    }

    /// The session a query names (id, unique prefix, `PROJECT/SESSION` or custom title):
    /// `{"project", "session_id"}`.
    fn session<'py>(&self, py: Python<'py>, query: &str) -> PyResult<Bound<'py, PyAny>> {
        let found = py.detach(|| self.db.session(query)).map_err(py_err)?;
        answer(py, &found)
    }

    /// The conversation's messages as the Agent SDK's `get_session_messages` gives them.
    /// Each `message` is built from its stored JSON text (see [`message_dicts`]).
    fn messages<'py>(&self, py: Python<'py>, session: &str) -> PyResult<Bound<'py, PyList>> {
        let messages = py
            .detach(|| {
                let found = self.db.session(session)?;
                self.db.db().stored_session_messages(&found, None, 0)
            })
            .map_err(py_err)?;
        message_dicts(py, messages)
    }

    /// What Claude Code's `--resume` rebuilds: the state (`sessiondb resume --json`), or with
    /// `api=True` the messages array sent to the model (`sessiondb resume --api`).
    #[pyo3(signature = (session, model=None, *, api=false))]
    fn resume<'py>(
        &self,
        py: Python<'py>,
        session: &str,
        model: Option<String>,
        api: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let resumed = py
            .detach(|| {
                let found = self.db.session(session)?;
                let options = ResumeOptions {
                    model,
                    ..Default::default()
                };
                let resumed = self.db.resume(&found, &options)?;
                Ok::<_, Error>(if api {
                    Value::Array(resumed.into_api_view())
                } else {
                    serde_json::to_value(&resumed)?
                })
            })
            .map_err(py_err)?;
        to_py(py, &resumed)
    }

    /// Full-text search over every stored line, best hits first.
    #[pyo3(signature = (text, *, project=None, tag=None, role=None, tools=false, limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        text: String,
        project: Option<String>,
        tag: Option<String>,
        role: Option<String>,
        tools: bool,
        limit: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let query = SearchQuery {
            text,
            project,
            tag,
            role,
            tools,
            limit,
            ..Default::default()
        };
        let found = py.detach(|| self.db.search(&query)).map_err(py_err)?;
        answer(py, &found.hits)
    }

    /// Forks a session as `--fork-session` does; returns what was written.
    #[pyo3(signature = (session, *, up_to=None, title=None, session_id=None))]
    fn fork<'py>(
        &self,
        py: Python<'py>,
        session: &str,
        up_to: Option<String>,
        title: Option<String>,
        session_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let forked = py
            .detach(|| {
                let found = self.db.session(session)?;
                let options = ForkOptions {
                    up_to,
                    title,
                    session_id,
                };
                self.db.fork(&found, &options)
            })
            .map_err(py_err)?;
        answer(py, &forked)
    }

    /// Appends transcript records (a list of dicts) to a stored session with Claude Code's
    /// write rules (parents chained, duplicate uuids skipped, `progress` dropped).
    fn append<'py>(
        &self,
        py: Python<'py>,
        session: &str,
        entries: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = dumps(py, entries)?;
        let report = py
            .detach(|| {
                let entries: Vec<Value> = serde_json::from_slice(&text)
                    .map_err(|e| Error::Invalid(format!("entries: {e}")))?;
                let found = self.db.session(session)?;
                self.db.append(&found, &entries)
            })
            .map_err(py_err)?;
        answer(py, &report)
    }

    /// The session's main transcript as it was imported and appended to (JSONL bytes).
    fn export<'py>(&self, py: Python<'py>, session: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| {
                let found = self.db.session(session)?;
                let mut out = Vec::new();
                self.db.export(&found, &mut out)?;
                Ok::<_, Error>(out)
            })
            .map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    // --- the Agent SDK's SessionStore protocol (see sessiondb::streams) ----------

    /// `append`: stores a batch (JSON text of a list); returns `(appended, duplicates)`.
    #[pyo3(signature = (project_key, session_id, subpath, entries))]
    fn stream_append(
        &self,
        py: Python<'_>,
        project_key: String,
        session_id: String,
        subpath: Option<String>,
        entries: &[u8],
    ) -> PyResult<(u64, u64)> {
        let key = key(project_key, session_id, subpath);
        let outcome = py
            .detach(|| {
                let entries: Vec<&RawValue> = serde_json::from_slice(entries)
                    .map_err(|e| Error::Invalid(format!("entries: {e}")))?;
                streams::append(self.db.db(), &key, &entries)
            })
            .map_err(py_err)?;
        Ok((outcome.appended, outcome.duplicates))
    }

    /// `load`: the stream's entries, or `None` for a stream never written.
    #[pyo3(signature = (project_key, session_id, subpath))]
    fn stream_load<'py>(
        &self,
        py: Python<'py>,
        project_key: String,
        session_id: String,
        subpath: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = key(project_key, session_id, subpath);
        match py
            .detach(|| streams::load(self.db.db(), &key))
            .map_err(py_err)?
        {
            Some(text) => protocol_json(py, &text),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// `list_sessions`: `[{"session_id", "mtime"}]`.
    fn stream_list_sessions<'py>(
        &self,
        py: Python<'py>,
        project_key: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let listed = py
            .detach(|| streams::list_sessions(self.db.db(), &project_key))
            .map_err(py_err)?;
        answer(py, &listed)
    }

    /// `list_session_summaries`: `[{"session_id", "mtime", "data"}]`.
    fn stream_list_session_summaries<'py>(
        &self,
        py: Python<'py>,
        project_key: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = py
            .detach(|| streams::list_session_summaries(self.db.db(), &project_key))
            .map_err(py_err)?;
        protocol_json(py, &text)
    }

    /// `delete`: a main key removes the session with everything under it.
    #[pyo3(signature = (project_key, session_id, subpath))]
    fn stream_delete(
        &self,
        py: Python<'_>,
        project_key: String,
        session_id: String,
        subpath: Option<String>,
    ) -> PyResult<u64> {
        let key = key(project_key, session_id, subpath);
        let outcome = py
            .detach(|| streams::delete(self.db.db(), &key))
            .map_err(py_err)?;
        Ok(outcome.streams)
    }

    /// `list_subkeys`: the session's subpaths, in first-write order.
    fn stream_list_subkeys(
        &self,
        py: Python<'_>,
        project_key: String,
        session_id: String,
    ) -> PyResult<Vec<String>> {
        py.detach(|| streams::list_subkeys(self.db.db(), &project_key, &session_id))
            .map_err(py_err)
    }

    /// The fold a main session owes: `summary/pending`'s answer, or `None` when the session
    /// has no main stream.
    fn stream_summary_pending<'py>(
        &self,
        py: Python<'py>,
        project_key: String,
        session_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        match py
            .detach(|| streams::summary_pending(self.db.db(), &project_key, &session_id))
            .map_err(py_err)?
        {
            Some(text) => protocol_json(py, &text),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// Stores a fold (`put`: JSON text of `{expect, through, mtime, data}`) if nobody folded
    /// since `expect`; returns False on such a conflict.
    fn stream_summary_put(
        &self,
        py: Python<'_>,
        project_key: String,
        session_id: String,
        put: &[u8],
    ) -> PyResult<bool> {
        py.detach(|| {
            let put: SummaryPut<'_> =
                serde_json::from_slice(put).map_err(|e| Error::Invalid(format!("summary: {e}")))?;
            streams::summary_put(self.db.db(), &project_key, &session_id, &put)
        })
        .map_err(py_err)
    }
}

/// `json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` encoded
/// as UTF-8, written without Python's encoder (about a quarter of an in-process append);
/// `None` for what it leaves to `json.dumps` (see [`pyjson::write`]).
#[pyfunction]
fn dumps_compact<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let mut out = Vec::with_capacity(4096);
    Ok(pyjson::write(value, &mut out)?.then(|| PyBytes::new(py, &out)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Store>()?;
    m.add_function(wrap_pyfunction!(dumps_compact, m)?)?;
    m.add("SessionDbError", m.py().get_type::<SessionDbError>())?;
    m.add(
        "SessionNotFoundError",
        m.py().get_type::<SessionNotFoundError>(),
    )?;
    Ok(())
}
