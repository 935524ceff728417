package s3

import (
	"net/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// The errors of S3's error reference
// (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html),
// with their HTTP statuses.

func errNoSuchBucket(name string) *awsapi.Error {
	return awsapi.NewError("NoSuchBucket", "The specified bucket does not exist").WithStatus(http.StatusNotFound).With("BucketName", name)
}

func errNoSuchKey(key string) *awsapi.Error {
	return awsapi.NewError("NoSuchKey", "The specified key does not exist.").WithStatus(http.StatusNotFound).With("Key", key)
}

func errInvalidArgument(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidArgument", format, args...)
}

func errInvalidRequest(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidRequest", format, args...)
}

func errMalformedXML() *awsapi.Error {
	return awsapi.NewError("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
}

func errAccessDenied(msg string) *awsapi.Error {
	return awsapi.NewError("AccessDenied", "%s", msg).WithStatus(http.StatusForbidden)
}

func errNotFound(code, msg, bucket string) *awsapi.Error {
	return awsapi.NewError(code, "%s", msg).WithStatus(http.StatusNotFound).With("BucketName", bucket)
}
