package tfrun_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

// TestAccSetupSharesTheProvider: installations of one module link to one
// provider binary, built once, instead of each building and copying its
// own, and each mirrors that binary.
func TestAccSetupSharesTheProvider(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var files []os.FileInfo
	for range 2 {
		inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{inst.Provider, inst.MirroredProvider()} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fi)
		}
	}
	for i, fi := range files[1:] {
		if !os.SameFile(files[0], fi) {
			t.Errorf("provider file %d of the two installations is not the first one's: each built or copied its own", i+1)
		}
	}
}
