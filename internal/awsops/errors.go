package awsops

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
)

// ErrNotFound is what every NotFoundError is (errors.Is).
var ErrNotFound = errors.New("not found")

// NotFoundError says that a resource does not exist. The functions that
// find one resource return it for an absent one, so that absence has one
// sign: check it with errors.Is(err, ErrNotFound), or errors.As for the
// resource.
type NotFoundError struct {
	Kind string // "table", "event source mapping"
	ID   string // its name, ARN or URL
	// Err is the service's error that said so, if any.
	Err error
}

func (e *NotFoundError) Error() string        { return fmt.Sprintf("%s %s does not exist", e.Kind, e.ID) }
func (e *NotFoundError) Unwrap() error        { return e.Err }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotFound returns a NotFoundError of kind and id when err says that the
// resource does not exist, else err.
func NotFound(kind, id string, err error) error {
	if isNotFoundCode(err) {
		return &NotFoundError{Kind: kind, ID: id, Err: err}
	}
	return err
}

// IsNotFound reports whether err says that the resource does not exist: a
// NotFoundError, or a service's error in any of the services' words.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || isNotFoundCode(err)
}

// isNotFoundCode is the one place that knows the services' not-found codes.
func isNotFoundCode(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ResourceNotFoundException", "NoSuchEntity", "NoSuchEntityException",
		"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "NotFoundException",
		"TableNotFoundException", "ResourceNotFound",
		// SNS (GetTopicAttributes of a missing topic), S3's HeadBucket.
		"NotFound",
		// S3: a bucket, and a bucket's configurations that it has none of.
		"NoSuchBucket", "NoSuchTagSet", "NoSuchLifecycleConfiguration", "NoSuchBucketPolicy",
		"NoSuchPublicAccessBlockConfiguration", "ServerSideEncryptionConfigurationNotFoundError":
		return true
	}
	return false
}

// IsConflict reports whether err says that the resource is busy with
// another change (a mapping being deleted, a table being updated).
func IsConflict(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ResourceConflictException", "ResourceInUseException", "ConflictException":
		return true
	}
	return false
}

// IgnoreNotFound returns nil for a not-found error, else err.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// Found returns what get takes from the output of a call that reads a
// resource or a configuration, or the zero value (none) when err reports
// that it does not exist.
func Found[O, T any](out *O, err error, get func(*O) T) (T, error) {
	var none T
	if err != nil {
		return none, IgnoreNotFound(err)
	}
	return get(out), nil
}

// Delete deletes the resource id with del, unless id is empty (nothing was
// recorded); a resource already gone is no error. what names the resource
// in the error ("relay function").
func Delete(ctx context.Context, what, id string, del func(context.Context, string) error) error {
	if id == "" {
		return nil
	}
	if err := IgnoreNotFound(del(ctx, id)); err != nil {
		return fmt.Errorf("deleting %s (%s): %w", what, id, err)
	}
	return nil
}
