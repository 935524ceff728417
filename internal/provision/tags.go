package provision

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// tags returns the tags of every tagged component: Spec.Tags and the
// pipeline's name.
func (s Spec) tags() map[string]string {
	return awsops.WithTag(s.Tags, TagPipeline, s.Name)
}

// isValidation reports whether err is a validation error whose message
// contains text.
func isValidation(err error, text string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), text)
}
