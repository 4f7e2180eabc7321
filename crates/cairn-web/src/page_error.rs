//! Errors as HTML pages: [`PageError`] shows the same status, message and code as the REST API's [`ApiError`], for
//! page handlers and for refusals the access gate makes before a page's handler runs ([`refusal_page`]).

use askama::Template;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// An HTML error page with `status`, `code` and `message` (for refusals made before a handler runs).
pub(crate) fn refusal_page(status: StatusCode, code: &str, message: &str) -> Response {
    PageError(ApiError::roscoe(status, code, message)).into_response()
}

/// An error shown as an HTML page, with the same status, message and code as the REST API.
#[derive(Debug)]
pub(crate) struct PageError(pub(crate) ApiError);

impl From<ApiError> for PageError {
    fn from(error: ApiError) -> PageError {
        PageError(error)
    }
}

macro_rules! page_error_from {
    ($($t:ty),*) => {$(
        impl From<$t> for PageError {
            fn from(error: $t) -> PageError {
                PageError(error.into())
            }
        }
    )*};
}
page_error_from!(cairn_roscoe::Error, cairn_work::Error);

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: StatusCode,
    message: &'a str,
    code: &'a str,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let page = ErrorPage { status: self.0.status, message: self.0.message(), code: self.0.code() };
        let body = page.render().unwrap_or_else(|_| self.0.message().to_owned());
        (self.0.status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
    }
}
