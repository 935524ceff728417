// Command iamdocs rewrites the IAM tables of the operations guide's
// template, between <!-- BEGIN_IAM_ROLES --> and <!-- END_IAM_ROLES -->
// and between <!-- BEGIN_IAM_COMMANDS --> and <!-- END_IAM_COMMANDS -->,
// from the code that builds the roles' policies and runs the subcommands.
//
//	go run ./tools/iamdocs templates/guides/operations.md.tmpl
package main

import (
	"fmt"
	"os"

	"github.com/outboxkit/terraform-provider-outbox/internal/iamdocs"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: iamdocs FILE...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		changed, err := iamdocs.Update(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "iamdocs:", err)
			os.Exit(1)
		}
		if changed {
			fmt.Printf("iamdocs: updated %s\n", path)
		}
	}
}
