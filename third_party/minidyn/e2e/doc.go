/*
Package e2e runs AWS SDK v2 DynamoDB operations against both minidyn (in-process
HTTP) and DynamoDB Local (Docker via testcontainers) to compare behavior.
*/
package e2e
