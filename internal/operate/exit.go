package operate

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes: each means one thing, for scripts and monitors. exitCodes
// describes them for --help and the operations guide.
const (
	ExitOK = 0
	// ExitStuck: unhealthy or incomplete: events stuck or not published,
	// the drain timed out, messages left in the dead-letter queue.
	ExitStuck = 1
	// ExitUsage: the command line is wrong.
	ExitUsage = 2
	// ExitNotFound: the pipeline, one of its components, an event, the
	// region or the credentials could not be found.
	ExitNotFound = 3
	// ExitFailed: an AWS call failed (denied, throttled, unreachable) or
	// the pipeline's configuration cannot be read.
	ExitFailed = 4
	// ExitInterrupted: a signal (Ctrl-C, SIGTERM) stopped the work.
	ExitInterrupted = 130
)

// exitCodes are the exit codes and their meanings, in the order of --help.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{ExitOK, "healthy, or done"},
	{ExitStuck, "unhealthy or incomplete: events stuck or not published, drain timed out, batches left in the dead-letter queue"},
	{ExitUsage, "the command line is wrong: unknown subcommand or flag, a bad value, an empty time window"},
	{ExitNotFound, "not found: the pipeline or one of its components, an event id, the AWS region or credentials"},
	{ExitFailed, "an AWS call failed (denied, throttled, unreachable), or the pipeline's configuration is unreadable"},
	{ExitInterrupted, "interrupted (Ctrl-C or SIGTERM) before the work was done"},
}

// exitError ends a subcommand with a code; its message, if any, goes to
// standard error.
type exitError struct {
	code int
	msg  string
	// hint follows the message on a line of its own.
	hint string
}

func (e *exitError) Error() string { return e.msg }

func stuck(format string, args ...any) error {
	return &exitError{code: ExitStuck, msg: fmt.Sprintf(format, args...)}
}

// usageError is a wrong command line of the subcommand name ("" for the
// command itself): its message comes with where to read the usage.
func usageError(name, format string, args ...any) error {
	hint := `Run "outbox --help" for the subcommands.`
	if name != "" {
		hint = fmt.Sprintf(`Run "outbox %s --help" for its flags and an example.`, name)
	}
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...), hint: hint}
}

// notFoundError marks an error as a "not found" one (ErrNotFound,
// ExitNotFound) without changing its message.
type notFoundError struct{ error }

func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

func (e notFoundError) Unwrap() error { return e.error }

// exitCode is the exit code of a subcommand's outcome.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNothingToReplay):
		return ExitNotFound
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailed
}
