//! The REST API under `/api` (JSON; spec roscoe §17 plus the work surface), registered here one route per line and
//! described by the OpenAPI document at `/api/openapi.json`, which utoipa generates from the handlers' types and
//! annotations. Handlers are thin: parse, resolve `?project=`, make one facade call, answer. The query types every
//! area shares (`ProjectQuery`, `SourceArg`) are here.

mod docs;
mod runs;
mod work;
mod workflows;

use std::sync::Arc;

use axum::middleware;
use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::OpenApi as Document;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::{ContentBuilder, ObjectBuilder, Required, Response};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use cairn_roscoe::Source;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::json_only;
use crate::state::Web;

/// `?project=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ProjectQuery {
    /// `global` or a project id; default: the server's `--project`, else global.
    pub(crate) project: Option<String>,
}

/// A workflow source.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceArg {
    /// `<project>/.roscoe/workflows/`.
    Repo,
    /// `$CAIRN_HOME/workflows/`.
    Global,
}

impl From<SourceArg> for Source {
    fn from(s: SourceArg) -> Source {
        match s {
            SourceArg::Repo => Source::Repo,
            SourceArg::Global => Source::Global,
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "cairn", description = "The REST API of `cairn serve`: roscoe workflows and runs, the docs, \
        and work items, spaces and documents (bearer tokens, as for `/mcp`)."),
    modifiers(&BearerScheme, &JsonOnly),
)]
struct ApiDoc;

/// The operations of `item` that can change something.
fn changing(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [item.post.as_mut(), item.put.as_mut(), item.patch.as_mut(), item.delete.as_mut()].into_iter().flatten()
}

/// Says what `json_only.rs` enforces: every operation that can change something takes `application/json` (an
/// operation without a body of its own takes `{}` or nothing) and may answer 415.
struct JsonOnly;

impl Modify for JsonOnly {
    fn modify(&self, openapi: &mut Document) {
        for operation in openapi.paths.paths.values_mut().flat_map(changing) {
            let refused = Response::new("The request's `Content-Type` is not `application/json`: `{ error, code }`.");
            operation.responses.responses.insert("415".into(), refused.into());
            operation.request_body.get_or_insert_with(|| {
                let nothing = ContentBuilder::new().schema(Some(ObjectBuilder::new())).build();
                RequestBodyBuilder::new()
                    .description(Some("Nothing to send: `{}` or an empty body, as `application/json`."))
                    .content("application/json", nothing)
                    .required(Some(Required::False))
                    .build()
                    .into()
            });
        }
    }
}

/// Declares the `bearer` security scheme the work routes use.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut Document) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// Every `/api` route and `/api/openapi.json`.
pub(crate) fn routes(web: Web) -> Router {
    let (router, document) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(docs::projects))
        .routes(routes!(workflows::list, workflows::create))
        .routes(routes!(workflows::get, workflows::update, workflows::delete))
        .routes(routes!(workflows::move_to))
        .routes(routes!(workflows::duplicate))
        .routes(routes!(workflows::rename))
        .routes(routes!(workflows::validate))
        .routes(routes!(workflows::lint))
        .routes(routes!(workflows::diagram))
        .routes(routes!(runs::list, runs::start))
        .routes(routes!(runs::get))
        .routes(routes!(runs::events))
        .routes(routes!(runs::resume))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::retry))
        .routes(routes!(runs::budget))
        .routes(routes!(docs::list))
        .routes(routes!(docs::search))
        .routes(routes!(docs::get))
        .routes(routes!(work::list_items, work::create_item))
        .routes(routes!(work::get_item, work::update_item))
        .routes(routes!(work::claim_item))
        .routes(routes!(work::heartbeat))
        .routes(routes!(work::ready))
        .routes(routes!(work::claim_next))
        .routes(routes!(work::record_evidence))
        .routes(routes!(work::handoff_item))
        .routes(routes!(work::list_spaces, work::create_space))
        .routes(routes!(work::list_documents, work::create_document))
        .routes(routes!(work::get_document, work::update_document))
        .routes(routes!(work::document_status))
        .with_state(web)
        .split_for_parts();
    let document = Arc::new(document);
    router.layer(middleware::from_fn(json_only::require)).route("/api/openapi.json", get(move || async move { Json(document.as_ref().clone()) }))
}
