package localawstest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Eventually polls cond until it holds, and fails t when it still does not
// after within; what names the awaited condition.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyState(t, within, what, func() (bool, string) { return cond(), "" })
}

// EventuallyState is Eventually for a condition that describes what it
// saw: cond reports whether it holds and, when not, the state t's failure
// shows if the wait ends there.
func EventuallyState(t testing.TB, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("timed out after %s waiting for %s", within, what)
			if state != "" {
				msg += "; last state: " + state
			}
			t.Fatal(msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RetryIAM retries fn while it fails with an IAM propagation error, for a
// bounded time, as the AWS provider does.
func RetryIAM(fn func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := fn()
		if !iamRetryable(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// iamRetryable reports the errors AWS returns while IAM changes propagate,
// which the AWS provider retries.
func iamRetryable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"cannot be assumed by Lambda", "execution role does not have permissions", "ensure the role can perform"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
