//! Asking the person at the keyboard through the MCP client (elicitation, form mode): one choice among a few, with
//! an optional comment. Only clients that declared the `elicitation` capability (form) on a protocol before
//! 2026-07-28 are asked (that protocol forbids server-to-client requests); for others [`Asker::of`] is `None`.

use std::collections::BTreeMap;

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema, PrimitiveSchemaDefinition, ProtocolVersion,
    StringSchema,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};
use serde_json::Value;

/// The form's field for the choice.
const CHOICE: &str = "decision";
/// The form's field for the comment.
const COMMENT: &str = "comment";

/// Who asks the person behind one call's client.
#[derive(Clone, Debug)]
pub struct Asker {
    peer: Peer<RoleServer>,
}

/// One question: `message`, and the choices as (value, title).
#[derive(Clone, Debug)]
pub struct Question {
    /// What the person is asked.
    pub message: String,
    /// The choices: the value answered, and how it is shown.
    pub choices: Vec<(String, String)>,
    /// Whether the form offers a comment.
    pub comment: bool,
}

/// What the person answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answered {
    /// A choice (one of the question's values), and the comment if they wrote one.
    Chose {
        /// The value chosen.
        choice: String,
        /// The comment.
        comment: Option<String>,
    },
    /// They declined or dismissed the form, or the client could not show it: nothing was decided.
    Nothing(String),
}

impl Asker {
    /// The asker of the client of request `context`, when it can show a form.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Asker> {
        let peer = &context.peer;
        let info = peer.peer_info()?;
        if info.protocol_version >= ProtocolVersion::V_2026_07_28 {
            return None;
        }
        peer.supported_elicitation_modes().contains(&ElicitationMode::Form).then(|| Asker { peer: peer.clone() })
    }

    /// Asks `question` and waits for the person.
    pub async fn ask(&self, question: &Question) -> Answered {
        let values: Vec<String> = question.choices.iter().map(|(value, _)| value.clone()).collect();
        let titles: Vec<String> = question.choices.iter().map(|(_, title)| title.clone()).collect();
        let choice = match EnumSchema::builder(values.clone()).enum_titles(titles) {
            Ok(builder) => builder.title("Decision").build(),
            Err(_) => EnumSchema::builder(values.clone()).title("Decision").build(),
        };
        let mut properties = BTreeMap::from([(CHOICE.to_owned(), PrimitiveSchemaDefinition::Enum(choice))]);
        if question.comment {
            let comment = StringSchema::new().title("Comment").description("Optional: why, or what to change");
            properties.insert(COMMENT.to_owned(), PrimitiveSchemaDefinition::String(comment));
        }
        let mut schema = ElicitationSchema::new(properties);
        schema.property_order = Some(vec![CHOICE.to_owned(), COMMENT.to_owned()]);
        schema.required = Some(vec![CHOICE.to_owned()]);
        let message = question.message.clone();
        let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema };
        let result = match self.peer.create_elicitation(params).await {
            Ok(result) => result,
            Err(error) => return Answered::Nothing(format!("the client could not ask: {error}")),
        };
        match result.action {
            ElicitationAction::Accept => {}
            ElicitationAction::Decline => return Answered::Nothing("the person declined to answer".into()),
            _ => return Answered::Nothing("the person dismissed the question".into()),
        }
        let content = result.content.unwrap_or(Value::Null);
        let Some(choice) = content.get(CHOICE).and_then(Value::as_str).filter(|c| values.iter().any(|v| v == c)) else {
            return Answered::Nothing(format!("the answer named none of the choices: {content}"));
        };
        let comment = content.get(COMMENT).and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty());
        Answered::Chose { choice: choice.to_owned(), comment: comment.map(str::to_owned) }
    }
}
