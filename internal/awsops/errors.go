package awsops

import (
	"errors"

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
