// Command tfdocs rewrites the inputs and outputs tables of Terraform modules'
// READMEs, between <!-- BEGIN_TF_DOCS --> and <!-- END_TF_DOCS -->, from
// their variables, outputs and requirements.
//
//	go run ./tools/tfdocs modules/outbox-pipeline
package main

import (
	"fmt"
	"os"

	"github.com/outboxkit/terraform-provider-outbox/internal/moduledocs"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tfdocs MODULE_DIR...")
		os.Exit(2)
	}
	for _, dir := range os.Args[1:] {
		changed, err := moduledocs.UpdateModuleReadme(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tfdocs:", err)
			os.Exit(1)
		}
		if changed {
			fmt.Printf("tfdocs: updated %s/README.md\n", dir)
		}
	}
}
