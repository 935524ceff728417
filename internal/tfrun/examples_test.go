package tfrun_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const root = "../.."

// TestAccExamplesComplete applies examples/complete with the real CLI and
// the provider built from this checkout, writes orders with the outbox
// Writer, checks that each subscription receives exactly its events, and
// destroys everything.
func TestAccExamplesComplete(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	t.Parallel()
	ctx, stack, checkDestroyed := startExampleStack(t)

	// x86_64 functions start faster here than arm64 ones under qemu; the
	// demo runs the example's default.
	vars := []tfrun.Var{{Name: "architecture", Value: "x86_64"}}
	d, err := demo.Deploy(ctx, root, tf, t.TempDir(), stack.Endpoint(), stack.Options().Region, acctest.TestLog(t), vars...)
	destroyed := destroyOnFailure(t, func(ctx context.Context) error {
		if d == nil {
			return nil
		}
		return d.Runner.Destroy(ctx, vars...)
	})
	if err != nil {
		t.Fatalf("applying examples/complete: %v", err)
	}
	o := d.Outputs
	if o.TableName != "orders" || !strings.HasSuffix(o.EventBusARN, ":event-bus/default") ||
		len(o.SubscriptionQueueURLs) != 2 || o.SubscriptionQueueURLs["billing"] == "" || o.SubscriptionQueueURLs["shipping"] == "" {
		t.Fatalf("outputs = %+v", o)
	}

	cfg := demo.AWSConfig(stack.Endpoint(), stack.Options().Region)
	ddb := dynamodb.NewFromConfig(cfg)
	w, err := outbox.NewWriter(ddb, o.WriterTable.Table())
	if err != nil {
		t.Fatal(err)
	}
	tally := demo.NewTally(demo.Routes)
	errs, stopConsumers := startConsumers(ctx, t, sqs.NewFromConfig(cfg), o.SubscriptionQueueURLs, tally)
	const orders = 10
	placeOrders(ctx, t, w, tally, orders)
	// The order items share the table with their events.
	if out, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: &o.TableName}); err != nil || out.Count != orders*2+orders/2 {
		t.Errorf("the table holds %d items (%v), want %d orders and %d events", out.Count, err, orders, orders+orders/2)
	}

	waitDelivered(t, tally, errs)
	stopConsumers()
	s := tally.Summary()
	t.Log(s.String())
	want := map[string]int{"billing": orders, "shipping": orders + orders/2}
	for _, ss := range s.Subscriptions {
		if ss.Expected != want[ss.Name] || ss.Delivered != ss.Expected || ss.Unexpected != 0 {
			t.Errorf("subscription %s: %+v, want exactly its %d events", ss.Name, ss, want[ss.Name])
		}
	}
	if s.Written != orders+orders/2 || s.Lost != 0 {
		t.Errorf("summary: %s", s.Line())
	}

	if err := d.Runner.Destroy(ctx, vars...); err != nil {
		t.Fatalf("destroying examples/complete: %v", err)
	}
	destroyed()
	checkDestroyed()
}

// destroyOnFailure has destroy run when the test ends, unless the test
// destroyed what it applied itself and said so by calling destroyed.
func destroyOnFailure(t *testing.T, destroy func(context.Context) error) (destroyed func()) {
	done := false
	t.Cleanup(func() {
		if !done {
			if err := destroy(context.Background()); err != nil {
				t.Errorf("destroying after a failure: %v", err)
			}
		}
	})
	return func() { done = true }
}

// startExampleStack starts a local stack of the test's own for an example
// and returns a context that ends within 15 minutes, the stack, and a check,
// to call once the example is destroyed, that the stack holds again what it
// held before the example.
func startExampleStack(t *testing.T) (context.Context, *localaws.Stack, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	stack := localawstest.Start(t)
	ctl := localawstest.Control(stack)
	before := localawstest.Inventory(ctx, t, ctl)
	return ctx, stack, func() {
		t.Helper()
		localawstest.CheckInventory(ctx, t, ctl, before, "destroy")
	}
}

// startConsumers receives the events of each subscription's queue (urls,
// by subscription) into tally. Their errors arrive on errs; stop ends them,
// waits for them and reports the errors left.
func startConsumers(ctx context.Context, t *testing.T, q *sqs.Client, urls map[string]string, tally *demo.Tally) (errs <-chan error, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var consumers sync.WaitGroup
	ch := make(chan error, len(urls))
	for sub, url := range urls {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			if err := demo.Consume(ctx, q, url, sub, tally); err != nil {
				ch <- err
			}
		}()
	}
	return ch, func() {
		cancel()
		consumers.Wait()
		close(ch)
		for err := range ch {
			t.Error(err)
		}
	}
}

// placeOrders places n orders with w, and cancels every second one.
func placeOrders(ctx context.Context, t *testing.T, w *outbox.Writer, tally *demo.Tally, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("acc-%02d", i)
		if err := demo.PlaceOrder(ctx, w, id, float64(i)+0.5, tally); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := demo.CancelOrder(ctx, w, id, tally); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// waitDelivered waits up to 2 minutes until the consumers have received
// every event written, and fails on the first error of a consumer.
func waitDelivered(t *testing.T, tally *demo.Tally, errs <-chan error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p := tally.Progress(); p.Delivered < p.Written; p = tally.Progress() {
		if time.Now().After(deadline) {
			t.Errorf("delivered %d of %d events within 2 minutes", p.Delivered, p.Written)
			return
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestAccExamplesValidate runs terraform init (through the mirror) and
// validate in every directory of examples/.
func TestAccExamplesValidate(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	t.Parallel()
	// The subtests run in parallel, after this function returns.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := acctest.CLIVersion(tf)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") && !slices.Contains(dirs, filepath.Dir(p)) {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 3 {
		t.Fatalf("found only %v", dirs)
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			types, declared := configInfo(t, dir)
			var foreign []string
			for _, typ := range types {
				if !strings.HasPrefix(typ, tfrun.ProviderType+"_") {
					foreign = append(foreign, typ)
				}
			}
			if len(foreign) > 0 {
				t.Fatalf("uses %v: examples must validate offline, with this provider alone", foreign)
			}
			staged, err := tfrun.Stage(root, t.TempDir(), "modules", rel)
			if err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(staged, rel)
			if !newerSyntax(t, cli, rel, work) {
				return
			}
			if !declared {
				// Documentation snippets (tfplugindocs examples) omit
				// required_providers; without it the provider would be
				// hashicorp/outbox.
				src := fmt.Sprintf("terraform {\n  required_providers {\n    outbox = { source = %q }\n  }\n}\n", tfrun.ProviderNamespace+"/"+tfrun.ProviderType)
				if err := os.WriteFile(filepath.Join(work, "required_providers.tf"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run := inst.Runner(work, nil)
			if err := run.Init(ctx); err != nil {
				t.Fatal(err)
			}
			if err := run.Validate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// configInfo returns the resource and data source types a directory uses
// and whether it declares required_providers.
func configInfo(t *testing.T, dir string) (types []string, declared bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	schema := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "terraform"}, {Type: "resource", LabelNames: []string{"type", "name"}}, {Type: "data", LabelNames: []string{"type", "name"}},
	}}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		content, _, diags := file.Body.PartialContent(schema)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		for _, b := range content.Blocks {
			switch b.Type {
			case "terraform":
				if body, ok := b.Body.(*hclsyntax.Body); ok {
					for _, nb := range body.Blocks {
						declared = declared || nb.Type == "required_providers"
					}
				}
			default:
				types = append(types, b.Labels[0])
			}
		}
	}
	return types, declared
}

// newerSyntax leaves out of the staged example work what the CLI of version
// cli cannot read: an example of actions needs Terraform 1.14 (it is
// skipped), an import block by identity 1.12 (its file is removed). It
// reports whether anything is left to validate.
func newerSyntax(t *testing.T, cli *version.Version, rel, work string) bool {
	t.Helper()
	if strings.HasPrefix(filepath.ToSlash(rel), "examples/actions/") && cli.LessThan(tfversion.Version1_14_0) {
		t.Skipf("actions need Terraform 1.14; the CLI is %s", cli)
		return false
	}
	if cli.LessThan(tfversion.Version1_12_0) {
		if err := os.Remove(filepath.Join(work, "import-by-identity.tf")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return true
}
