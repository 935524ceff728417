package targets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/targets"
)

const (
	queueArn = "arn:aws:sqs:us-east-1:000000000000:q"
	fnArn    = "arn:aws:lambda:us-east-1:000000000000:function:f"
	topicArn = "arn:aws:sns:us-east-1:000000000000:t"
)

var errDenied = errors.New("denied")

func allow(action, resource, source string) string {
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":%q,"Resource":%q,"Condition":{"ArnEquals":{"aws:SourceArn":%q}}}]}`, action, resource, source)
}

// receiver is a queue service and a function service with one policy per
// ARN; a missing ARN does not exist.
type receiver map[string]string

func (r receiver) QueuePolicy(arn string) (string, bool)    { p, ok := r[arn]; return p, ok }
func (r receiver) FunctionPolicy(arn string) (string, bool) { p, ok := r[arn]; return p, ok }
func (r receiver) InvokeAsync(context.Context, string, []byte) error {
	return nil
}

func TestQueueAndFunctionChecks(t *testing.T) {
	t.Parallel()
	grant := targets.Grant{Principal: "sns.amazonaws.com", SourceArn: topicArn, SourceAccount: "000000000000", Denied: errDenied}
	allowing := receiver{queueArn: allow("sqs:SendMessage", queueArn, topicArn), fnArn: allow("lambda:InvokeFunction", fnArn, topicArn)}
	otherSource := receiver{queueArn: allow("sqs:SendMessage", queueArn, topicArn+"x"), fnArn: allow("lambda:InvokeFunction", fnArn, topicArn+"x")}
	resolve := func(r receiver) targets.Deps[receiver] {
		return targets.Deps[receiver]{
			Queues:    func() (receiver, error) { return r, nil },
			Functions: func() (targets.FunctionInvoker, error) { return r, nil },
		}
	}
	cases := []struct {
		name    string
		deps    targets.Deps[receiver]
		wantErr string // "" for allowed
	}{
		{"allowed", resolve(allowing), ""},
		{"another source", resolve(otherSource), "denied"},
		{"missing", resolve(receiver{}), "does not exist"},
		{"no services", targets.Deps[receiver]{}, "no "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, qerr := tc.deps.Queue(grant, queueArn)
			_, ferr := tc.deps.Function(grant, fnArn)
			for what, err := range map[string]error{"Queue": qerr, "Function": ferr} {
				switch {
				case tc.wantErr == "" && err != nil:
					t.Errorf("%s: %v, want allowed", what, err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Errorf("%s: %v, want an error with %q", what, err, tc.wantErr)
				}
			}
			if tc.wantErr == "denied" && !errors.Is(qerr, errDenied) {
				t.Errorf("Queue error %v is not the grant's Denied error", qerr)
			}
		})
	}
}
