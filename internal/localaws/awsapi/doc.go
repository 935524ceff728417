// Package awsapi is the protocol kit shared by the services of the local AWS
// stack.
//
// A service package (internal/localaws/<service>) implements [Service]: it
// declares in its [Spec] how AWS addresses it (X-Amz-Target prefix, SigV4
// signing name, wire protocol) and handles decoded requests in Handle. The
// [Router] finds the service and the operation of each HTTP request the way
// AWS does, resolves the caller's [Principal] from the access key id,
// consults the [Faults] registry, calls the service and writes the result or
// the error in the exact wire shape of the service's protocol, so the real
// aws-sdk-go-v2 clients decode typed errors.
//
// A handler returns either a value, which is encoded for the protocol (JSON
// for the JSON and REST-JSON protocols, an XML <OpResult> element for
// awsQuery), a [*Raw] response for full control of status, headers and body,
// or an error. An [*Error] keeps its code, message and status; any other
// error becomes an InternalFailure (500).
//
// A service declares its operations in one table, [Operations]: [Decoded]
// decodes an operation's JSON input into its type, [Locked] does so and runs
// the handler under the service's lock, and [FromForm] hands an awsQuery
// handler its parameters. A REST service gives each operation its Route
// ("GET /2015-03-31/functions/{FunctionName}"): [Routes] names the
// operation of a request from its method and path and hands the handler the
// path labels ([Request.PathValue]).
//
// A service embeds a [Lifecycle] for what the stack manages beside the
// requests: the inventory it lists and its Close. Work beside the requests
// (deliveries, timers, runners, pollers) runs in the Lifecycle's
// [Background], which Close cancels and waits for.
//
// Authorisation: a handler calls [Request.Authorize] with an IAM action and a
// resource ARN. With no [Authorizer] installed in the [Env], everything is
// allowed. Access keys the stack did not issue belong to administrators;
// [Credentials.IssueRoleCredentials] issues temporary keys for a role, and
// requests signed with them carry that role session as their principal.
//
// Control routes live under /_localaws/ and never collide with AWS paths.
package awsapi
