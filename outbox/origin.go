package outbox

import (
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// regionPattern is the shape of an AWS Region name: a partition's area and
// place, then a number ("eu-west-1", "us-gov-east-1", "ap-southeast-5").
var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// clientRegion returns the Region a DynamoDB client sends its requests to,
// or "" when the client does not say.
func clientRegion(client TransactWriter) string {
	c, ok := client.(interface{ Options() dynamodb.Options })
	if !ok {
		return ""
	}
	return c.Options().Region
}

// checkOrigin refuses an origin that is not a Region name. An empty one is
// allowed: the events then carry no origin, as before the attribute existed.
func checkOrigin(region string) error {
	if region == "" || regionPattern.MatchString(region) {
		return nil
	}
	return fmt.Errorf("outbox writer origin %q is not an AWS Region name such as \"eu-west-1\": "+
		"set the Region of the DynamoDB client, or pass it with WithOrigin", region)
}
