// Command terraform-provider-outbox serves the outbox Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/outboxkit/terraform-provider-outbox/internal/provider"
)

// version is set by the release build (goreleaser).
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/outboxkit/outbox",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
