"""The schemathesis check of the read-only pass of .ci/schemathesis.sh: a token holding only read scopes changes
nothing, so every operation that writes answers 403 (insufficient_scope), 401 when schemathesis leaves the token
out, or 413/415 when the request is refused before its scopes are looked at. POST /api/validate, /api/lint and /api/diagram only read."""

import schemathesis

READING_POSTS = {"/api/validate", "/api/lint", "/api/diagram"}
REFUSED = {401, 403, 413, 415}


@schemathesis.check
def writes_refused(ctx, response, case):
    method = case.operation.method.upper()
    # Cases that send another method (TRACE to a POST route, say) test unsupported methods: no route, nothing written.
    if case.method.upper() != method:
        return None
    if method not in {"POST", "PUT", "PATCH", "DELETE"} or case.operation.path in READING_POSTS:
        return None
    if response.status_code not in REFUSED:
        raise AssertionError(
            f"{method} {case.operation.path} with a read-only token answered {response.status_code}, not 403"
        )
    return None
