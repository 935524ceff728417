package awsops

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
)

// IsNotFound reports whether err says that the resource does not exist, in
// any of the services' words.
func IsNotFound(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ResourceNotFoundException", "NoSuchEntity", "NoSuchEntityException",
		"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "NotFoundException",
		"TableNotFoundException", "ResourceNotFound",
		// SNS (GetTopicAttributes of a missing topic).
		"NotFound":
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
