// Command outbox-demo runs the orders service of examples/complete end to
// end on a local AWS stack: it applies the example with the real Terraform
// CLI and the provider built from this checkout, writes orders and their
// events in transactions, consumes every subscription's queue and prints the
// delivery summary.
//
//	go run ./cmd/outbox-demo --duration 20s --writers 4
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "outbox-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var o demo.Options
	fs := flag.NewFlagSet("outbox-demo", flag.ContinueOnError)
	fs.StringVar(&o.Root, "root", ".", "the repository's root")
	fs.StringVar(&o.Terraform, "terraform", filepath.Join("bin", "terraform"), "the Terraform CLI (make tools builds it)")
	fs.IntVar(&o.Writers, "writers", 4, "concurrent writers")
	fs.DurationVar(&o.Interval, "interval", 0, "pause of each writer between orders (default 50ms)")
	fs.DurationVar(&o.Duration, "duration", 0, "how long the writers write (default 20s)")
	fs.DurationVar(&o.Settle, "settle", 0, "longest wait for delivery once the writers stop (default 2m)")
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:0", "listen address of the local AWS stack (port 0 picks a free one)")
	fs.StringVar(&o.Architecture, "architecture", "", "architecture of the relay functions, arm64 or x86_64 (default: the example's, arm64)")
	fs.BoolVar(&o.Keep, "keep", false, "leave the stack and the resources running until interrupted")
	verbose := fs.Bool("v", false, "show Terraform's output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Out = os.Stdout
	if *verbose {
		o.Log = os.Stderr
	} else {
		o.Log = io.Discard
	}
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		o.Live = true
	}
	_, err := demo.Run(ctx, o)
	return err
}
