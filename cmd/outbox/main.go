// Command outbox operates a transactional outbox pipeline on AWS: status,
// failed, requeue, drain, replay and redrive. It finds the pipeline's
// components by the pipeline's name; nothing needs Terraform state.
//
//	go install ./cmd/outbox
//	outbox status orders --region eu-west-1
//
// Results go to standard output (as JSON with --json); progress, notes and
// errors to standard error. See the operations guide
// (docs/guides/operations.md) for every subcommand, its exit codes and the
// IAM permissions each needs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cli := &operate.CLI{Stdout: os.Stdout, Stderr: os.Stderr, Terminal: operate.IsTerminal(os.Stderr)}
	code := cli.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
