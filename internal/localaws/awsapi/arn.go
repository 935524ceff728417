package awsapi

import (
	"fmt"
	"strings"
)

// Defaults of the stack's single region and account.
const (
	DefaultRegion    = "us-east-1"
	DefaultAccountID = "000000000000"
	Partition        = "aws"
)

// ARN formats arn:aws:service:region:account:resource.
func ARN(service, region, account, resource string) string {
	return "arn:" + Partition + ":" + service + ":" + region + ":" + account + ":" + resource
}

// ParsedARN is an ARN split into its parts.
type ParsedARN struct {
	Partition, Service, Region, AccountID, Resource string
}

// String formats the ARN.
func (a ParsedARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.AccountID + ":" + a.Resource
}

// ParseARN splits an ARN. The resource keeps its own separators.
func ParseARN(s string) (ParsedARN, error) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] == "" {
		return ParsedARN{}, fmt.Errorf("invalid ARN %q", s)
	}
	return ParsedARN{Partition: parts[1], Service: parts[2], Region: parts[3], AccountID: parts[4], Resource: parts[5]}, nil
}

// ResourceName returns the part of an ARN's resource after its type
// ("table/orders" gives "orders", "function:f" gives "f"). For anything that
// is not an ARN it returns s: many APIs accept a name or an ARN.
func ResourceName(s string) string {
	a, err := ParseARN(s)
	if err != nil {
		return s
	}
	r := a.Resource
	if i := strings.IndexAny(r, "/:"); i >= 0 {
		return r[i+1:]
	}
	return r
}
