// Command terraform-provider-outbox serves the outbox Terraform provider.
//
// Terraform starts it; run by hand, -version prints its version and the
// relay deployment packages it embeds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/outboxkit/terraform-provider-outbox/internal/provider"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

// version and commit are set by the release build (goreleaser).
var (
	version = "dev"
	commit  = "none"
)

func main() {
	var debug, showVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.BoolVar(&showVersion, "version", false, "print the version and the relay packages this binary embeds, then exit")
	flag.Parse()
	if showVersion {
		if err := printVersion(os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/outboxkit/outbox",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// printVersion writes the version, the commit, and the CodeSha256 of each
// embedded relay package: the value Lambda reports for the function the
// provider deploys. A build without the packages fails.
func printVersion(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "terraform-provider-outbox %s (commit %s)\n", version, commit); err != nil {
		return err
	}
	for _, arch := range relaypackage.Architectures {
		sum, err := relaypackage.SHA256(arch)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "relay %s CodeSha256 %s\n", arch, sum); err != nil {
			return err
		}
	}
	return nil
}
