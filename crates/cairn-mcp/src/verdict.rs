//! Judging one line a client sent over stdio, before rmcp sees it: a message to serve, a fault to answer, or a
//! notification or response that does not fit (JSON-RPC never answers those, so it is only logged).
//!
//! rmcp drops what is not JSON without a word and answers JSON that is not a message with an error that names no id;
//! a known method whose `params` do not fit it reaches the handler as an unknown method. Here every fault gets the
//! JSON-RPC 2.0 answer: `-32700` (parse error) for what is not JSON, `-32600` (invalid request) for JSON that is not
//! a request, `-32601` (method not found) for a method MCP does not define, `-32602` (invalid params) for a known
//! method whose `params` do not fit it, each with the request's id when one can be read and `null` otherwise. A
//! message nested more than [`MAX_DEPTH`] levels deep is never built: its id is read from its top level alone
//! ([`crate::shallow`]).

use rmcp::model::{
    CallToolRequest, CancelTaskRequest, ClientJsonRpcMessage, CompleteRequest, ConstString, DiscoverRequest, ErrorCode,
    ErrorData, GetPromptRequest, GetSkillRequest, GetTaskRequest, InitializeRequest, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, ListSkillsRequest, ListToolsRequest, PingRequest,
    ReadResourceDirectoryRequest, ReadResourceRequest, Request, RequestId, RequestNoParam, RequestOptionalParam,
    SubscriptionsListenRequest, UpdateTaskRequest,
};
#[allow(deprecated, reason = "clients of older protocol versions still send these")]
use rmcp::model::{SetLevelRequest, SubscribeRequest, UnsubscribeRequest};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::shallow::{self, MAX_DEPTH};

/// What to do with a line.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// A message for the server.
    Serve(Box<ClientJsonRpcMessage>),
    /// A fault, answered with an error.
    Answer(Fault),
    /// A notification or response that does not fit, and why: logged, never answered.
    Ignore(String),
}

/// A fault in what a client sent, and the error that answers it.
#[derive(Debug)]
pub(crate) struct Fault {
    /// The id of the request at fault, when one could be read.
    pub(crate) id: Option<RequestId>,
    pub(crate) error: ErrorData,
}

impl Fault {
    /// A fault of the request `id` (if known), answered with `error`.
    pub(crate) fn new(id: Option<RequestId>, error: ErrorData) -> Fault {
        Fault { id, error }
    }

    /// The answer: one JSON-RPC error response, `"id": null` when no id could be read, ending with a newline.
    pub(crate) fn answer(&self) -> Vec<u8> {
        let id = self.id.clone().map_or(Value::Null, RequestId::into_json_value);
        let mut line = json!({"jsonrpc": "2.0", "id": id, "error": self.error}).to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

/// Judges one line (without its line ending).
pub(crate) fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(err) => {
            return parse_error(format!(
                "the line is not UTF-8 (the byte at offset {} is not valid there). Send each message as one line of \
                 UTF-8 JSON.",
                err.valid_up_to()
            ));
        }
    };
    if shallow::nests_too_deep(line) {
        return Verdict::Answer(too_deep(shallow::request_id(line)));
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => {
            return parse_error(format!("the line is not JSON ({err}). Send each message as one line of JSON."));
        }
    };
    match &value {
        Value::Object(_) => judge_message(value),
        Value::Array(_) => invalid(
            None,
            "batches (JSON arrays of messages) are not part of MCP since protocol version 2025-06-18. Send each \
             message on a line of its own."
                .into(),
        ),
        other => invalid(None, format!("a JSON-RPC message is a JSON object, not {}.", kind(other))),
    }
}

/// The answer to a message that nests too deep: with its id, when it is a request whose top level reads well.
pub(crate) fn too_deep(id: Option<RequestId>) -> Fault {
    let message = format!(
        "Invalid Request: the message nests arrays and objects more than {MAX_DEPTH} levels deep; flatten the \
         arguments (or send the deep value as a string)."
    );
    Fault::new(id, ErrorData::invalid_request(message, None))
}

/// Judges a JSON object.
fn judge_message(value: Value) -> Verdict {
    let id = value.get("id").and_then(|id| RequestId::deserialize(id).ok());
    let Some(method) = value.get("method") else {
        if value.get("result").is_some() || value.get("error").is_some() {
            return parse_or_ignore(value, "response");
        }
        return invalid(
            id,
            "the message has neither a \"method\" (as a request or notification has) nor a \"result\" or \"error\" \
             (as a response has)."
                .into(),
        );
    };
    let is_request = value.get("id").is_some();
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "\"jsonrpc\" must be \"2.0\".".into());
    }
    let Some(method) = method.as_str() else {
        return invalid(id, format!("\"method\" must be a string, not {}.", kind(method)));
    };
    let params_fit_any_method = matches!(value.get("params"), None | Some(Value::Null | Value::Object(_)));
    if !is_request {
        if !params_fit_any_method {
            return invalid(None, format!("\"params\" must be an object, not {}.", kind(&value["params"])));
        }
        return parse_or_ignore(value, "notification");
    }
    let Some(id) = id else {
        return invalid(None, format!("\"id\" must be a string or an integer, not {}.", kind(&value["id"])));
    };
    let Some((_, fits)) = KNOWN_METHODS.iter().find(|(known, _)| *known == method) else {
        let message = format!(
            "Method not found: {method:?} is not a request MCP defines. The tools this server has are listed by \
             tools/list and called with tools/call."
        );
        return Verdict::Answer(Fault::new(Some(id), ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None)));
    };
    let misfit = match value.get("params") {
        Some(params) if !params_fit_any_method => Some(format!("\"params\" must be an object, not {}", kind(params))),
        _ => fits(&value).err().map(|err| err.to_string()),
    };
    if let Some(misfit) = misfit {
        let message = format!("Invalid params for {method}: {misfit}. See the method's parameters in the MCP schema.");
        return Verdict::Answer(Fault::new(Some(id), ErrorData::invalid_params(message, None)));
    }
    match serde_json::from_value(value) {
        Ok(message) => Verdict::Serve(Box::new(message)),
        Err(err) => invalid(Some(id), format!("the request does not fit JSON-RPC ({err}).")),
    }
}

/// A notification or response rmcp can read, else the reason it cannot.
fn parse_or_ignore(value: Value, what: &str) -> Verdict {
    match serde_json::from_value(value) {
        Ok(message) => Verdict::Serve(Box::new(message)),
        Err(err) => Verdict::Ignore(format!("a {what} that does not fit JSON-RPC ({err})")),
    }
}

fn parse_error(message: String) -> Verdict {
    Verdict::Answer(Fault::new(None, ErrorData::parse_error(format!("Parse error: {message}"), None)))
}

fn invalid(id: Option<RequestId>, message: String) -> Verdict {
    Verdict::Answer(Fault::new(id, ErrorData::invalid_request(format!("Invalid Request: {message}"), None)))
}

/// `a number`, `an array`, … for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether a request's `params` fit its method, and if not, why.
type Fits = fn(&Value) -> Result<(), serde_json::Error>;

/// A request rmcp reads into a type of its own; its method.
trait Typed {
    const METHOD: &'static str;
}

impl<M: ConstString, P> Typed for Request<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString, P> Typed for RequestOptionalParam<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString> Typed for RequestNoParam<M> {
    const METHOD: &'static str = M::VALUE;
}

fn fits<T: Typed + DeserializeOwned>(request: &Value) -> Result<(), serde_json::Error> {
    T::deserialize(request).map(drop)
}

macro_rules! known_methods {
    ($($request:ty),* $(,)?) => {
        &[$((<$request as Typed>::METHOD, fits::<$request> as Fits)),*]
    };
}

/// The client requests MCP defines (those rmcp reads into a type of its own).
#[allow(deprecated, reason = "clients of older protocol versions still send these")]
const KNOWN_METHODS: &[(&str, Fits)] = known_methods![
    PingRequest,
    InitializeRequest,
    DiscoverRequest,
    CompleteRequest,
    SetLevelRequest,
    GetPromptRequest,
    ListPromptsRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    SubscriptionsListenRequest,
    SubscribeRequest,
    UnsubscribeRequest,
    CallToolRequest,
    ListToolsRequest,
    GetTaskRequest,
    UpdateTaskRequest,
    CancelTaskRequest,
    ListSkillsRequest,
    GetSkillRequest,
    ReadResourceDirectoryRequest,
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rmcp::model::{ClientRequest, JsonRpcMessage};

    use super::*;

    /// The code and id a line is answered with; panics unless it is answered.
    fn answer(line: &[u8]) -> (i32, Value) {
        match judge(line) {
            Verdict::Answer(fault) => {
                let answer: Value = serde_json::from_slice(&fault.answer()).unwrap();
                (answer["error"]["code"].as_i64().unwrap() as i32, answer["id"].clone())
            }
            other => panic!("{} is not answered: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn what_is_not_json_is_a_parse_error_without_an_id() {
        for line in [
            b"garbage".as_slice(),
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
            br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\ud800"}}"#,
            br#"{"jsonrpc":"2.0","id":4,"method":"ping"} trailing"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"ping""#,
        ] {
            assert_eq!(answer(line), (-32700, Value::Null), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn json_that_is_not_a_request_is_invalid_with_the_id_when_it_can_be_read() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let call = |id: &str, levels: usize| {
            let x = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{"x":{x}}}}}}}"#)
        };
        let (deep_call, deeper_call, deep_notification) =
            (call("2", 100), call(r#""two""#, 10_000), call("2", 100).replace(r#""id":2,"#, ""));
        for (line, id) in [
            (deep.as_str(), Value::Null),
            (deep_call.as_str(), json!(2)),
            (deeper_call.as_str(), json!("two")),
            (deep_notification.as_str(), Value::Null),
            (r#"[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]"#, Value::Null),
            ("[]", Value::Null),
            ("5", Value::Null),
            ("{}", Value::Null),
            (r#"{"id":5,"method":"tools/list"}"#, json!(5)),
            (r#"{"jsonrpc":"1.0","id":"a","method":"tools/list"}"#, json!("a")),
            (r#"{"jsonrpc":"2.0","id":6,"method":5}"#, json!(6)),
            (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":8}"#, json!(8)),
            (r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":"bar"}"#, Value::Null),
        ] {
            assert_eq!(answer(line.as_bytes()), (-32600, id), "{line}");
        }
    }

    #[test]
    fn a_known_method_whose_params_do_not_fit_is_invalid_params_with_its_id() {
        for (line, id) in [
            (r#"{"jsonrpc":"2.0","id":71008,"method":"tools/call","params":"abc"}"#, json!(71008)),
            (r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":"x"}}"#, json!(9)),
            (r#"{"jsonrpc":"2.0","id":"s","method":"tools/call"}"#, json!("s")),
            (r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":5}"#, json!(10)),
            (r#"{"jsonrpc":"2.0","id":11,"method":"initialize","params":{}}"#, json!(11)),
        ] {
            assert_eq!(answer(line.as_bytes()), (-32602, id), "{line}");
        }
        let Verdict::Answer(fault) = judge(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"abc"}"#) else {
            panic!("answered")
        };
        assert_eq!(
            fault.error.message,
            "Invalid params for tools/call: \"params\" must be an object, not a string. See the method's parameters in \
             the MCP schema."
        );
    }

    #[test]
    fn an_unknown_method_is_not_found_with_its_id() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"nope/nope","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}"#,
        ] {
            assert_eq!(answer(line.as_bytes()), (-32601, json!(7)), "{line}");
        }
    }

    #[test]
    fn good_messages_go_to_the_server() {
        let serve = |line: &str| match judge(line.as_bytes()) {
            Verdict::Serve(message) => *message,
            other => panic!("{line}: {other:?}"),
        };
        let JsonRpcMessage::Request(request) = serve(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}"#)
        else {
            panic!("a request")
        };
        assert!(matches!(request.request, ClientRequest::ListToolsRequest(_)));
        let JsonRpcMessage::Request(request) = serve("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}")
        else {
            panic!("a request")
        };
        assert!(matches!(request.request, ClientRequest::PingRequest(_)), "a byte order mark is ignored");
        assert!(matches!(
            serve(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            JsonRpcMessage::Notification(_)
        ));
        assert!(matches!(serve(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), JsonRpcMessage::Response(_)));
    }

    #[test]
    fn notifications_and_responses_that_do_not_fit_are_only_logged() {
        assert!(matches!(judge(br#"{"jsonrpc":"2.0","id":3,"result":5,"error":5}"#), Verdict::Ignore(_)));
        assert!(matches!(judge(br#"{"result":{}}"#), Verdict::Ignore(_)));
    }

    #[test]
    fn brackets_in_strings_do_not_nest() {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}\"\\"}}}}"#, "[".repeat(100));
        assert!(matches!(judge(line.as_bytes()), Verdict::Serve(_)), "{line}");
    }

    proptest! {
        #[test]
        fn any_bytes_get_a_verdict_and_answers_are_json_rpc_errors(line in prop::collection::vec(any::<u8>(), 0..200)) {
            if let Verdict::Answer(fault) = judge(&line) {
                let answer: Value = serde_json::from_slice(&fault.answer()).unwrap();
                prop_assert_eq!(&answer["jsonrpc"], "2.0");
                prop_assert!(answer["error"]["code"].is_i64());
                prop_assert!(answer.get("id").is_some());
            }
        }
    }
}
